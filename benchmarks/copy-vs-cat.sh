#!/usr/bin/env bash
# Side-by-side: `sluice copy --no-fsync` against `cat SRC > DST` (which uses copy_file_range),
# warm, alternating, destination deleted between runs outside the timed region.
# Usage: benchmarks/copy-vs-cat.sh [SIZE_MIB] [RUNS]   (defaults 1024 and 5)
set -euo pipefail
size_mib=${1:-1024}
runs=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
swift build -c release --package-path "$here" >/dev/null
sluice="$here/.build/release/sluice"
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
head -c "$((size_mib * 1024 * 1024))" /dev/urandom > "$work/src"
cat "$work/src" > /dev/null
now() { date +%s.%N; }
time_it() { local start end; start=$(now); "$@"; end=$(now); echo "$end - $start" | bc -l; }
run_cat() { cat "$work/src" > "$work/dst"; }
run_sluice() { "$sluice" copy --no-fsync "$work/src" "$work/dst"; }
# Warm-up, not counted.
run_cat; rm -f "$work/dst"; run_sluice; rm -f "$work/dst"
cat_times=(); sluice_times=()
for _ in $(seq "$runs"); do
  cat_times+=("$(time_it run_cat)"); rm -f "$work/dst"
  sluice_times+=("$(time_it run_sluice)"); rm -f "$work/dst"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
cat_median=$(median "${cat_times[@]}")
sluice_median=$(median "${sluice_times[@]}")
printf 'size %d MiB, %d runs each (median)\n' "$size_mib" "$runs"
printf 'cat    %.3f s  %.0f MiB/s\n' "$cat_median" "$(echo "$size_mib / $cat_median" | bc -l)"
printf 'sluice %.3f s  %.0f MiB/s\n' "$sluice_median" "$(echo "$size_mib / $sluice_median" | bc -l)"
printf 'speed ratio sluice/cat: %.2fx\n' "$(echo "$cat_median / $sluice_median" | bc -l)"
