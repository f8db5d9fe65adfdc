#!/usr/bin/env bash
# The goal of `decompress -l` (issue: within 1.1x of `decompress -t` on a 1 GiB single-member
# file): both decode every byte; medians of RUNS alternating runs after a warm-up, from the page
# cache. The file: 1 GiB of the machine's own files (binaries and text) compressed by pigz -6 (one
# member), or FILE when given.
# Usage: benchmarks/list-vs-test.sh [RUNS] [FILE]   (default 5)
set -euo pipefail
runs=${1:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # median, now
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-list.XXXXXX")
trap 'rm -rf "$work"' EXIT
file=${2:-}
if [ -z "$file" ]; then
  file="$work/mixed.gz"
  find /usr/lib /usr/share -type f -size +10k 2>/dev/null | head -20000 | xargs cat 2>/dev/null | head -c 1G \
    | pigz -6 > "$file" || true
fi
cat "$file" > /dev/null
"$sluice" decompress -l "$file" > /dev/null; "$sluice" decompress -t "$file"
# Seconds "$@" takes, its standard output discarded.
quiet() { local start end; start=$(now); "$@" > /dev/null; end=$(now); echo "$end - $start" | bc -l; }
list=(); test=()
for round in $(seq "$runs"); do
  if (( round % 2 )); then
    list+=("$(quiet "$sluice" decompress -l "$file")"); test+=("$(quiet "$sluice" decompress -t "$file")")
  else
    test+=("$(quiet "$sluice" decompress -t "$file")"); list+=("$(quiet "$sluice" decompress -l "$file")")
  fi
done
l=$(median "${list[@]}"); t=$(median "${test[@]}")
printf '%s (%s bytes): decompress -l %.2f s, decompress -t %.2f s, ratio %.2fx (median of %d)\n' \
  "$(basename "$file")" "$(stat -c %s "$file")" "$l" "$t" "$(echo "$l / $t" | bc -l)" "$runs"
