#!/usr/bin/env bash
# Side-by-side: sluice compress/decompress against gzip, pigz and a bare zlib inflate loop, on
# one mixed text/binary file, warm, every command once a round (the next round in reverse
# order), one warm-up round discarded, outputs deleted between runs outside the timed region,
# --no-fsync. Reports per command the median seconds, MB/s of uncompressed data, peak RSS
# (GNU time: wait4 on that child) and output size, then the ratios the README quotes.
#   compress, at levels 1, 6 and 9: sluice (-p 2 and -p 1), gzip -n, pigz -p 2 -n
#   decompress (of gzip -6's output): sluice, gzip -d, pigz -d, and inflate-loop: one thread
#     of zlib inflate(3) between read(2) and write(2) (benchmarks/inflate-loop.c, built here
#     with the toolchain's clang), the most any zlib-based decoder can do on one core.
# Usage: benchmarks/gzip-vs-sluice.sh [SIZE_MIB] [RUNS] [mixed|text]   (defaults 128, 5, mixed)
#   mixed: half text, half random bytes, in 1 MiB stripes; text: the text stripes only, which
#   shows the speed without Sluice's shortcut for data deflate cannot shrink (stored blocks).
set -euo pipefail
size_mib=${1:-128}
runs=${2:-5}
data=${3:-mixed}
[[ $size_mib =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ && $data =~ ^(mixed|text)$ ]] ||
  { echo "usage: $0 [SIZE_MIB] [RUNS] [mixed|text]" >&2; exit 64; }
here=$(cd "$(dirname "$0")/.." && pwd)
for tool in gzip pigz clang python3 bc; do
  command -v "$tool" >/dev/null || { echo "gzip-vs-sluice.sh: $tool is missing" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "gzip-vs-sluice.sh: GNU time (/usr/bin/time) is missing" >&2; exit 1; }
swift build -c release --product sluice --package-path "$here" >/dev/null
sluice="$here/.build/release/sluice"
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-gzip-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
clang -O2 -o "$work/inflate-loop" "$here/benchmarks/inflate-loop.c" -lz

# Mixed input: half text (repetitive, compressible), half random bytes, in 1 MiB stripes.
python3 - "$work/src" "$size_mib" "$data" <<'PY'
import os, random, sys
path, mib, data = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(1952)
words = [b"backpressure", b"chunk", b"capacity", b"snapshot", b"member", b"gzip", b"sluice", b"stream"]
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
for level in 1 6 9; do names+=("sluice-p2 -$level" "sluice-p1 -$level" "gzip -$level" "pigz-p2 -$level"); done
names+=("sluice -d" "gzip -d" "pigz -d" "inflate-loop -d")

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
  esac
  out=$( { /usr/bin/time -f '%e %M' "$@" > /dev/null; } 2>&1 | tail -1 )
  echo "$out"
}

declare -A seconds rss size
order=("${names[@]}")
for round in $(seq 0 "$runs"); do
  for name in "${order[@]}"; do
    read -r s m < <(run_one "$name")
    if [ "$round" -gt 0 ]; then
      seconds[$name]+="$s "; rss[$name]+="$m "
      size[$name]=$(stat -c %s "$work/out")
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
printf '%-18s %9s %9s %12s %14s\n' command seconds MB/s "peak RSS" "output bytes"
for name in "${names[@]}"; do
  s=$(median "${seconds[$name]}")
  printf '%-18s %9.3f %9.1f %8.1f MiB %14s\n' "$name" "$s" "$(echo "$size_mib * 1.048576 / $s" | bc -l)" \
    "$(echo "$(max "${rss[$name]}") / 1024" | bc -l)" "${size[$name]}"
done
speed() { echo "$(median "${seconds[$2]}") / $(median "${seconds[$1]}")" | bc -l; }  # $1 against $2
for level in 1 6 9; do
  printf 'compress -%s: sluice -p 2 / pigz -p 2 speed %.2fx, size %+.2f%%; -p 2 / -p 1 speed %.2fx; sluice / gzip speed %.2fx\n' \
    "$level" "$(speed "sluice-p2 -$level" "pigz-p2 -$level")" \
    "$(echo "(${size[sluice-p2 -$level]} / ${size[pigz-p2 -$level]} - 1) * 100" | bc -l)" \
    "$(speed "sluice-p2 -$level" "sluice-p1 -$level")" "$(speed "sluice-p2 -$level" "gzip -$level")"
done
printf 'decompress: sluice / pigz -d speed %.2fx; sluice / gzip -d %.2fx; sluice time / inflate-loop time %.2fx\n' \
  "$(speed "sluice -d" "pigz -d")" "$(speed "sluice -d" "gzip -d")" \
  "$(echo "$(median "${seconds[sluice -d]}") / $(median "${seconds[inflate-loop -d]}")" | bc -l)"
