#!/usr/bin/env bash
# Side-by-side: sluice compress/decompress against gzip and pigz on the same mixed
# text/binary file, warm, alternating, outputs deleted between runs outside the timed region,
# --no-fsync. Reports medians, ratios and peak RSS (from GNU time, i.e. wait4 on that child).
# Usage: benchmarks/gzip-vs-sluice.sh [SIZE_MIB] [RUNS]   (defaults 128 and 5)
set -euo pipefail
size_mib=${1:-128}
runs=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
swift build -c release --package-path "$here" >/dev/null
sluice="$here/.build/release/sluice"
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-gzip-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Mixed input: half text (repetitive, compressible), half random bytes, in 1 MiB stripes.
python3 - "$work/src" "$size_mib" <<'PY'
import os, random, sys
path, mib = sys.argv[1], int(sys.argv[2])
rng = random.Random(1952)
words = [b"backpressure", b"chunk", b"capacity", b"snapshot", b"member", b"gzip", b"sluice", b"stream"]
with open(path, "wb") as f:
    for i in range(mib):
        if i % 2 == 0:
            line = b""
            out = bytearray()
            while len(out) < 1 << 20:
                out += b" ".join(rng.choice(words) for _ in range(12)) + b" %d\n" % rng.randrange(10**6)
            f.write(bytes(out[: 1 << 20]))
        else:
            f.write(os.urandom(1 << 20))
PY
gzip -6 -n -c "$work/src" > "$work/src.gz"
cat "$work/src" "$work/src.gz" > /dev/null
have_pigz=0; command -v pigz >/dev/null && have_pigz=1

measure() { # name command... ; prints "seconds peak_kib"
  local out
  out=$( { /usr/bin/time -f '%e %M' "$@" > /dev/null; } 2>&1 | tail -1 )
  echo "$out"
}
declare -A seconds rss
names=(sluice-c gzip-c sluice-d gzip-d)
[ "$have_pigz" = 1 ] && names+=(pigz-c pigz-d)
run_one() {
  case $1 in
    sluice-c) measure "$sluice" compress --no-fsync -6 -o "$work/out" "$work/src" ;;
    gzip-c)   measure sh -c "gzip -6 -n -c '$work/src' > '$work/out'" ;;
    pigz-c)   measure sh -c "pigz -p 2 -6 -n -c '$work/src' > '$work/out'" ;;
    sluice-d) measure "$sluice" decompress --no-fsync -o "$work/out" "$work/src.gz" ;;
    gzip-d)   measure sh -c "gzip -d -c '$work/src.gz' > '$work/out'" ;;
    pigz-d)   measure sh -c "pigz -d -c '$work/src.gz' > '$work/out'" ;;
  esac
}
for name in "${names[@]}"; do run_one "$name" > /dev/null; rm -f "$work/out"; done   # warm-up
for _ in $(seq "$runs"); do
  for name in "${names[@]}"; do
    read -r s m < <(run_one "$name")
    seconds[$name]+="$s "; rss[$name]+="$m "
    rm -f "$work/out"
  done
done
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
max() { printf '%s\n' $1 | sort -g | tail -1; }
printf 'input %d MiB mixed text/binary, %d runs each, median seconds, MB/s of uncompressed data\n' "$size_mib" "$runs"
for name in "${names[@]}"; do
  s=$(median "${seconds[$name]}")
  printf '%-9s %7.3f s %8.1f MB/s  peak RSS %6.1f MiB\n' "$name" "$s" "$(echo "$size_mib * 1.048576 / $s" | bc -l)" "$(echo "$(max "${rss[$name]}") / 1024" | bc -l)"
done
ratio() { echo "$(median "${seconds[$2]}") / $(median "${seconds[$1]}")" | bc -l; }
printf 'compress   sluice/gzip -6 speed: %.2fx\n' "$(ratio sluice-c gzip-c)"
printf 'decompress sluice/gzip -d speed: %.2fx\n' "$(ratio sluice-d gzip-d)"
if [ "$have_pigz" = 1 ]; then
  printf 'compress   sluice/pigz -p 2 -6 speed: %.2fx\n' "$(ratio sluice-c pigz-c)"
  printf 'decompress sluice/pigz -d speed: %.2fx\n' "$(ratio sluice-d pigz-d)"
fi
