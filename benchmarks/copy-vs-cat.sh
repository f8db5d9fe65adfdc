#!/usr/bin/env bash
# Side-by-side: `sluice copy --no-fsync` against `cat SRC > DST` (which uses copy_file_range),
# warm, alternating, destination deleted between runs outside the timed region.
# Usage: benchmarks/copy-vs-cat.sh [SIZE_MIB] [RUNS]   (defaults 1024 and 5)
set -euo pipefail
size_mib=${1:-1024}
runs=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # sluice_binary, median, time_it
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
head -c "$((size_mib * 1024 * 1024))" /dev/urandom > "$work/src"
cat "$work/src" > /dev/null
run_cat() { cat "$work/src" > "$work/dst"; }
run_sluice() { "$sluice" copy --no-fsync "$work/src" "$work/dst"; }
# Warm-up, not counted.
run_cat; rm -f "$work/dst"; run_sluice; rm -f "$work/dst"
cat_times=(); sluice_times=()
for _ in $(seq "$runs"); do
  cat_times+=("$(time_it run_cat)"); rm -f "$work/dst"
  sluice_times+=("$(time_it run_sluice)"); rm -f "$work/dst"
done
cat_median=$(median "${cat_times[@]}")
sluice_median=$(median "${sluice_times[@]}")
printf 'size %d MiB, %d runs each (median)\n' "$size_mib" "$runs"
printf 'cat    %.3f s  %.0f MiB/s\n' "$cat_median" "$(echo "$size_mib / $cat_median" | bc -l)"
printf 'sluice %.3f s  %.0f MiB/s\n' "$sluice_median" "$(echo "$size_mib / $sluice_median" | bc -l)"
printf 'speed ratio sluice/cat: %.2fx\n' "$(echo "$cat_median / $sluice_median" | bc -l)"
