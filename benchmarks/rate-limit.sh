#!/usr/bin/env bash
# The goals of --limit-rate, side by side in one run (medians of RUNS, alternating order, after a
# warm-up; wall time and peak RSS from /usr/bin/time, with fsync):
#   1 MiB at 100K (goal 10 s ± 10 %);
#   a tree of 20 × 512 KiB at 1M (goal 10 s ± 10 %), beside `rsync -r --bwlimit=1024`;
#   200 MiB at 50M (goal 4.0 s ± 10 %), beside the same copy without a limit (peak RSS alike).
# Usage: benchmarks/rate-limit.sh [RUNS]   (default 5)
set -euo pipefail
runs=${1:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # median
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-rate.XXXXXX")
trap 'rm -rf "$work"' EXIT
head -c $((1 << 20)) /dev/urandom > "$work/one"
mkdir "$work/tree"
for i in $(seq -w 1 20); do head -c $((512 << 10)) /dev/urandom > "$work/tree/f$i"; done
head -c $((200 << 20)) /dev/urandom > "$work/big"

# Each case: a name, then its command; the destination is "$work/out", removed after each run.
names=(); commands=()
add() { names+=("$1"); shift; commands+=("$*"); }
add "copy 1 MiB --limit-rate 100K" "$sluice" copy --limit-rate 100K "$work/one" "$work/out"
add "copy -r 20 x 512 KiB --limit-rate 1M" "$sluice" copy -r --limit-rate 1M "$work/tree" "$work/out"
if command -v rsync >/dev/null; then
  add "rsync -r --bwlimit=1024 (same tree)" rsync -r --bwlimit=1024 "$work/tree/" "$work/out/"
fi
add "copy 200 MiB --limit-rate 50M" "$sluice" copy --limit-rate 50M "$work/big" "$work/out"
add "copy 200 MiB without a limit" "$sluice" copy --pipeline "$work/big" "$work/out"

declare -A seconds rss
run_case() {
  local line
  # shellcheck disable=SC2086
  line=$(/usr/bin/time -f '%e %M' ${commands[$1]} 2>&1 >/dev/null | tail -1)
  rm -rf "$work/out"
  seconds[$1]+="${line% *} "; rss[$1]+="${line#* } "
}
for index in "${!commands[@]}"; do run_case "$index"; done  # warm-up
seconds=(); rss=()
for round in $(seq "$runs"); do
  order=("${!commands[@]}")
  if (( round % 2 == 0 )); then order=($(printf '%s\n' "${order[@]}" | tac)); fi
  for index in "${order[@]}"; do run_case "$index"; done
done
printf '%d runs each, median (min-max) wall time and median peak RSS\n' "$runs"
for index in "${!commands[@]}"; do
  # shellcheck disable=SC2086
  sorted=$(printf '%s\n' ${seconds[$index]} | sort -g)
  # shellcheck disable=SC2086
  printf '%-40s %6.2f s (%s-%s)  %6.1f MiB\n' "${names[$index]}" "$(median ${seconds[$index]})" \
    "$(head -1 <<<"$sorted")" "$(tail -1 <<<"$sorted")" "$(echo "$(median ${rss[$index]}) / 1024" | bc -l)"
done
