#!/usr/bin/env bash
# Side-by-side: sluice compress/decompress against gzip, pigz and a bare zlib inflate loop, on
# one mixed text/binary file, warm, every command once a round (the next round in reverse
# order), one warm-up round discarded, outputs deleted between runs outside the timed region,
# --no-fsync. Reports per command the median seconds (wall clock, to the millisecond), MB/s of
# uncompressed data, peak RSS (GNU time: wait4 on that child) and output size, then the ratios
# benchmarks/README.md quotes.
#   compress, at levels 1, 6 and 9: sluice (-p 2 and -p 1), gzip -n, pigz -p 2 -n
#   decompress (of gzip -6's output): sluice, gzip -d, pigz -d, and inflate-loop: one thread
#     of zlib inflate(3) between read(2) and write(2) (benchmarks/inflate-loop.c, built here
#     with the toolchain's clang), the most any zlib-based decoder can do on one core.
#   parallel decompression (with ROWS all or decompress), of Sluice's own indexed -6 output:
#     sluice -p 2 and -p 1, pigz -d, gzip -d, the inflate loop; of a `bgzip -@ 2` file: sluice
#     -p 2, bgzip -d -@ 2, the inflate loop; the sizes of the indexed output, --no-index and
#     pigz -6; and --range: 1 MiB from the middle of the indexed file, timed to the microsecond.
#     These rows write to /dev/null: they time the decoders. Writing 256 MiB into the page cache
#     of this project's virtual machines varies about 2x run to run (pages the balloon driver
#     reported free fault in again on the host), which would swamp the ratio; the -dxfile rows,
#     sluice -p 2 and the inflate loop writing a file, show that case.
# Usage: benchmarks/gzip-vs-sluice.sh [SIZE_MIB] [RUNS] [mixed|text|logs] [all|compress|decompress]
#   (defaults 128, 5, mixed, all)
#   VERBOSE=1 in the environment prints every run's time on standard error.
#   mixed: half text, half random bytes, in 1 MiB stripes; text: the text stripes only, which
#   shows the speed without Sluice's shortcut for data deflate cannot shrink (stored blocks);
#   logs: web-server log lines, with about 18 % of the 4 KiB blocks random bytes.
#   compress: the compress rows and the decompression of gzip's output; decompress: the
#   parallel decompression rows only; all: both.
set -euo pipefail
size_mib=${1:-128}
runs=${2:-5}
data=${3:-mixed}
rows=${4:-all}
[[ $size_mib =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ && $data =~ ^(mixed|text|logs)$ && $rows =~ ^(all|compress|decompress)$ ]] ||
  { echo "usage: $0 [SIZE_MIB] [RUNS] [mixed|text|logs] [all|compress|decompress]" >&2; exit 64; }
here=$(cd "$(dirname "$0")/.." && pwd)
tools=(gzip pigz clang python3 bc)
[ "$rows" = compress ] || tools+=(bgzip)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "gzip-vs-sluice.sh: $tool is missing" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "gzip-vs-sluice.sh: GNU time (/usr/bin/time) is missing" >&2; exit 1; }
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # sluice_binary
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-gzip-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
clang -O2 -o "$work/inflate-loop" "$here/benchmarks/inflate-loop.c" -lz

# Mixed input: half text (repetitive, compressible), half random bytes, in 1 MiB stripes.
python3 - "$work/src" "$size_mib" "$data" <<'PY'
import os, random, sys
path, mib, data = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(1952)
words = [b"backpressure", b"chunk", b"capacity", b"snapshot", b"member", b"gzip", b"sluice", b"stream"]
if data == "logs":
    paths = [b"/", b"/index.html", b"/api/v1/items", b"/static/app.js", b"/img/logo.png", b"/login", b"/search"]
    agents = [b"Mozilla/5.0 (X11; Linux x86_64)", b"curl/8.5.0", b"Googlebot/2.1", b"Mozilla/5.0 (iPhone)"]
    lines = [b'%d.%d.%d.%d - - [04/Dec/2026:%02d:%02d:%02d +0000] "GET %s?id=%d HTTP/1.1" %d %d "-" "%s"\n' % (
        rng.randrange(1, 255), rng.randrange(256), rng.randrange(256), rng.randrange(256), rng.randrange(24),
        rng.randrange(60), rng.randrange(60), rng.choice(paths), rng.randrange(10**5), rng.choice([200, 200, 200, 304, 404]),
        rng.randrange(100, 60000), rng.choice(agents)) for _ in range(50000)]
    with open(path, "wb") as f:
        for _ in range(mib * 256):
            if rng.random() < 0.18:
                f.write(os.urandom(4096))
            else:
                block = b"".join(rng.choices(lines, k=40))
                while len(block) < 4096:
                    block += b"".join(rng.choices(lines, k=8))
                f.write(block[:4096])
    sys.exit(0)
with open(path, "wb") as f:
    for i in range(mib):
        if i % 2 == 0 or data == "text":
            out = bytearray()
            while len(out) < 1 << 20:
                out += b" ".join(rng.choice(words) for _ in range(12)) + b" %d\n" % rng.randrange(10**6)
            f.write(bytes(out[: 1 << 20]))
        else:
            f.write(os.urandom(1 << 20))
PY
gzip -6 -n -c "$work/src" > "$work/src.gz"
cat "$work/src" "$work/src.gz" > /dev/null

names=()
if [ "$rows" != decompress ]; then
  for level in 1 6 9; do names+=("sluice-p2 -$level" "sluice-p1 -$level" "gzip -$level" "pigz-p2 -$level"); done
  names+=("sluice -d" "gzip -d" "pigz -d" "inflate-loop -d")
fi
if [ "$rows" != compress ]; then
  # Sluice's own output (indexed), the same without the index, pigz's, and a BGZF file.
  "$sluice" compress --no-fsync -p 2 -6 -o "$work/own.gz" "$work/src"
  "$sluice" compress --no-fsync -p 2 -6 --no-index -o "$work/own-plain.gz" "$work/src"
  pigz -p 2 -6 -n -c "$work/src" > "$work/src.pigz"
  bgzip -@ 2 -c "$work/src" > "$work/src.bgz"
  cat "$work/own.gz" "$work/src.bgz" > /dev/null
  sync  # the inputs written back now, not during the timed runs
  names+=("sluice-p2 -dx" "sluice-p1 -dx" "pigz -dx" "gzip -dx" "inflate-loop -dx" "sluice-p2 -dxfile" "inflate-loop -dxfile")
  names+=("sluice-p2 -dbgzf" "bgzip-@2 -dbgzf" "inflate-loop -dbgzf")
fi

run_one() { # "COMMAND -LEVEL" or "COMMAND -d"; prints "seconds peak_kib"
  local command=${1% *} flag=${1#* } out
  case "$command $flag" in
    "sluice-p2 -"[0-9]) set -- "$sluice" compress --no-fsync -p 2 "$flag" -o "$work/out" "$work/src" ;;
    "sluice-p1 -"[0-9]) set -- "$sluice" compress --no-fsync -p 1 "$flag" -o "$work/out" "$work/src" ;;
    "gzip -"[0-9])      set -- sh -c "gzip $flag -n -c '$work/src' > '$work/out'" ;;
    "pigz-p2 -"[0-9])   set -- sh -c "pigz -p 2 $flag -n -c '$work/src' > '$work/out'" ;;
    "sluice -d")        set -- "$sluice" decompress --no-fsync -o "$work/out" "$work/src.gz" ;;
    "gzip -d")          set -- sh -c "gzip -d -c '$work/src.gz' > '$work/out'" ;;
    "pigz -d")          set -- sh -c "pigz -d -c '$work/src.gz' > '$work/out'" ;;
    "inflate-loop -d")  set -- "$work/inflate-loop" "$work/src.gz" "$work/out" ;;
    # The parallel rows write to /dev/null but the two -dxfile rows (see the header).
    "sluice-p2 -dx")    set -- "$sluice" decompress -p 2 -c "$work/own.gz" ;;
    "sluice-p1 -dx")    set -- "$sluice" decompress -p 1 -c "$work/own.gz" ;;
    "pigz -dx")         set -- pigz -d -c "$work/own.gz" ;;
    "gzip -dx")         set -- gzip -d -c "$work/own.gz" ;;
    "inflate-loop -dx") set -- "$work/inflate-loop" "$work/own.gz" /dev/null ;;
    "sluice-p2 -dxfile") set -- "$sluice" decompress --no-fsync -p 2 -o "$work/out" "$work/own.gz" ;;
    "inflate-loop -dxfile") set -- "$work/inflate-loop" "$work/own.gz" "$work/out" ;;
    "sluice-p2 -dbgzf") set -- "$sluice" decompress -p 2 -c "$work/src.bgz" ;;
    "bgzip-@2 -dbgzf")  set -- bgzip -d -@ 2 -c "$work/src.bgz" ;;
    "inflate-loop -dbgzf") set -- "$work/inflate-loop" "$work/src.bgz" /dev/null ;;
  esac
  # Wall time by bash's `time` to the millisecond (GNU time's %e has 10 ms steps), peak RSS by
  # GNU time (-o: the command's own messages go to /dev/null).
  local TIMEFORMAT=%3R wall
  wall=$( { time /usr/bin/time -o "$work/rss" -f '%M' "$@" > /dev/null 2>&1; } 2>&1 )
  echo "$wall $(tail -1 "$work/rss")"
}

declare -A seconds rss size
order=("${names[@]}")
for round in $(seq 0 "$runs"); do
  for name in "${order[@]}"; do
    read -r s m < <(run_one "$name")
    if [ "$round" -gt 0 ]; then
      seconds[$name]+="$s "; rss[$name]+="$m "
      [ -z "${VERBOSE:-}" ] || echo "round $round: $name $s s" >&2
      size[$name]=$(stat -c %s "$work/out" 2>/dev/null || echo -)
    fi
    rm -f "$work/out"
  done
  reversed=(); for ((i = ${#order[@]} - 1; i >= 0; i--)); do reversed+=("${order[i]}"); done
  order=("${reversed[@]}")
done

median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
max() { printf '%s\n' $1 | sort -g | tail -1; }
printf 'input %d MiB %s (%d bytes), %d runs each after a warm-up, medians; MB/s of uncompressed data\n' \
  "$size_mib" "$data" "$(stat -c %s "$work/src")" "$runs"
printf '%-21s %9s %9s %12s %14s\n' command seconds MB/s "peak RSS" "output bytes"
for name in "${names[@]}"; do
  s=$(median "${seconds[$name]}")
  printf '%-21s %9.3f %9.1f %8.1f MiB %14s\n' "$name" "$s" "$(echo "$size_mib * 1.048576 / $s" | bc -l)" \
    "$(echo "$(max "${rss[$name]}") / 1024" | bc -l)" "${size[$name]}"
done
speed() { echo "$(median "${seconds[$2]}") / $(median "${seconds[$1]}")" | bc -l; }  # $1 against $2
if [ "$rows" != decompress ]; then
  for level in 1 6 9; do
    printf 'compress -%s: sluice -p 2 / pigz -p 2 speed %.2fx, size %+.2f%%; -p 2 / -p 1 speed %.2fx; sluice / gzip speed %.2fx\n' \
      "$level" "$(speed "sluice-p2 -$level" "pigz-p2 -$level")" \
      "$(echo "(${size[sluice-p2 -$level]} / ${size[pigz-p2 -$level]} - 1) * 100" | bc -l)" \
      "$(speed "sluice-p2 -$level" "sluice-p1 -$level")" "$(speed "sluice-p2 -$level" "gzip -$level")"
  done
  printf 'decompress: sluice / pigz -d speed %.2fx; sluice / gzip -d %.2fx; sluice time / inflate-loop time %.2fx\n' \
    "$(speed "sluice -d" "pigz -d")" "$(speed "sluice -d" "gzip -d")" \
    "$(echo "$(median "${seconds[sluice -d]}") / $(median "${seconds[inflate-loop -d]}")" | bc -l)"
fi
if [ "$rows" != compress ]; then
  printf 'decompress -p 2 of the indexed file: %.2fx the inflate loop, %.2fx pigz -d, %.2fx gzip -d, %.2fx -p 1\n' \
    "$(speed "sluice-p2 -dx" "inflate-loop -dx")" "$(speed "sluice-p2 -dx" "pigz -dx")" \
    "$(speed "sluice-p2 -dx" "gzip -dx")" "$(speed "sluice-p2 -dx" "sluice-p1 -dx")"
  printf 'decompress -p 2 of the indexed file to a file: %.2fx the inflate loop to a file\n' \
    "$(speed "sluice-p2 -dxfile" "inflate-loop -dxfile")"
  printf 'decompress -p 2 of a bgzip -@ 2 file: %.2fx the inflate loop, %.2fx bgzip -d -@ 2\n' \
    "$(speed "sluice-p2 -dbgzf" "inflate-loop -dbgzf")" "$(speed "sluice-p2 -dbgzf" "bgzip-@2 -dbgzf")"
  indexed=$(stat -c %s "$work/own.gz") plain=$(stat -c %s "$work/own-plain.gz") pigz=$(stat -c %s "$work/src.pigz")
  printf 'size: indexed %d, --no-index %d (%+.3f%%), pigz -6 %d (%+.3f%%)\n' "$indexed" "$plain" \
    "$(echo "($indexed / $plain - 1) * 100" | bc -l)" "$pigz" "$(echo "($indexed / $pigz - 1) * 100" | bc -l)"
  # --range: 1 MiB from the middle, alternating the indexed file and the one without an index.
  start=$(( $(stat -c %s "$work/src") / 2 ))
  declare -A range_ms
  for round in $(seq 0 "$runs"); do
    for file in own.gz own-plain.gz; do
      t0=$(date +%s%N)
      "$sluice" decompress --range "$start:$((start + (1 << 20)))" "$work/$file" > "$work/out"
      t1=$(date +%s%N)
      [ "$(stat -c %s "$work/out")" -eq $((1 << 20)) ] || { echo "gzip-vs-sluice.sh: --range gave a wrong size" >&2; exit 1; }
      [ "$round" -gt 0 ] && range_ms[$file]+="$(echo "($t1 - $t0) / 1000000" | bc -l) "
    done
  done
  printf -- '--range of 1 MiB from offset %d: %.1f ms with the index, %.1f ms without (decoded from the start)\n' \
    "$start" "$(median "${range_ms[own.gz]}")" "$(median "${range_ms[own-plain.gz]}")"
fi
