#!/usr/bin/env bash
# What a chunk costs: `sluice copy --no-fsync --chunk-size SIZE` against `dd bs=SIZE` on one
# page-cached file (256 MiB), at 4K, 64K and 1M. Each round runs the six commands, alternating
# sluice and dd at each size; the next round runs them in reverse order. One warm-up round is
# discarded; the destination is deleted between runs, outside the timed region.
# Prints, per size and command, the median wall seconds, MiB/s and median CPU seconds (user +
# system of the command, from bash's `time`: the rusage of the child it waited for), the speed
# of sluice against dd, and the CPU time one more chunk costs each at 4K (and 64K):
#   (CPU at the size - CPU at 1M) / (chunks at the size - chunks at 1M).
# Usage: benchmarks/chunk-cost.sh [-n RUNS] [-s SIZE_MIB] [SLUICE]
#   RUNS: counted rounds (default 5); SIZE_MIB: the file's size (default 256);
#   SLUICE: the sluice binary (default: the one README "Install" builds, built if needed; lib.sh).
set -euo pipefail
usage() { sed -n 's/^# \{0,1\}//; /^Usage:/,/built if/p' "$0"; }
runs=5
size_mib=256
while getopts n:s:h opt; do
  case $opt in
    n) runs=$OPTARG ;;
    s) size_mib=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 64 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -le 1 ] || { usage >&2; exit 64; }
[[ $runs =~ ^[1-9][0-9]*$ && $size_mib =~ ^[1-9][0-9]*$ ]] || { echo "chunk-cost.sh: RUNS and SIZE_MIB are positive integers" >&2; exit 64; }
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # sluice_binary
if [ $# -eq 1 ]; then sluice=$1; else sluice=$(sluice_binary "$here"); fi
[ -x "$sluice" ] || { echo "chunk-cost.sh: '$sluice' is not an executable" >&2; exit 1; }
command -v dd >/dev/null || { echo "chunk-cost.sh: dd is missing" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-chunk-cost.XXXXXX")
trap 'rm -rf "$work"' EXIT
bytes=$((size_mib * 1024 * 1024))
head -c "$bytes" /dev/urandom > "$work/src"
cat "$work/src" > /dev/null   # into the page cache

sizes=(4K 64K 1M)
largest=${sizes[${#sizes[@]} - 1]}
bytes_of() { case $1 in *K) echo $((${1%K} * 1024)) ;; *M) echo $((${1%M} * 1024 * 1024)) ;; *) echo "$1" ;; esac; }
chunks_of() { local size; size=$(bytes_of "$1"); echo $(((bytes + size - 1) / size)); }
names=()
for size in "${sizes[@]}"; do names+=("sluice $size" "dd $size"); done

run_one() { # "sluice SIZE" or "dd SIZE"
  local command=${1% *} size=${1#* }
  case $command in
    sluice) "$sluice" copy --no-fsync --chunk-size "$size" "$work/src" "$work/dst" ;;
    dd) dd if="$work/src" of="$work/dst" bs="$size" status=none ;;
  esac
}

# Prints "wall_seconds cpu_seconds" of one run of $1 (bash's time: wall, user, system).
measure() {
  local times
  TIMEFORMAT='%3R %3U %3S'
  if ! times=$( { time run_one "$1" > /dev/null 2> "$work/stderr"; } 2>&1 ); then
    echo "chunk-cost.sh: '$1' failed: $(cat "$work/stderr")" >&2
    exit 1
  fi
  rm -f "$work/dst"
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<< "$times"
}

declare -A wall cpu
for round in $(seq 0 "$runs"); do
  order=("${names[@]}")
  if [ $((round % 2)) -eq 1 ]; then
    order=()
    for ((i = ${#names[@]} - 1; i >= 0; i--)); do order+=("${names[$i]}"); done
  fi
  for name in "${order[@]}"; do
    result=$(measure "$name")
    read -r w c <<< "$result"
    if [ "$round" -gt 0 ]; then
      wall[$name]+="$w "
      cpu[$name]+="$c "
    fi
  done
done

median() { printf '%s\n' $1 | sort -g | awk '{ a[NR] = $1 } END { printf "%.3f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
declare -A wall_median cpu_median
for name in "${names[@]}"; do
  wall_median[$name]=$(median "${wall[$name]}")
  cpu_median[$name]=$(median "${cpu[$name]}")
done

printf 'chunk cost: %d MiB page-cached file, sluice copy --no-fsync against dd, medians of %d runs after one warm-up round\n' "$size_mib" "$runs"
printf '%-6s %-7s %8s %8s %8s\n' size command seconds MiB/s "CPU s"
for name in "${names[@]}"; do
  printf '%-6s %-7s %8s %8.0f %8s\n' "${name#* }" "${name% *}" "${wall_median[$name]}" \
    "$(awk -v m="$size_mib" -v s="${wall_median[$name]}" 'BEGIN { print (s > 0 ? m / s : 0) }')" "${cpu_median[$name]}"
done
echo
for size in "${sizes[@]}"; do
  printf 'speed sluice/dd at %-3s: %.2fx\n' "$size" \
    "$(awk -v d="${wall_median["dd $size"]}" -v s="${wall_median["sluice $size"]}" 'BEGIN { print (s > 0 ? d / s : 0) }')"
done
# CPU microseconds one more chunk costs command $1 at size $2, against the largest size.
per_chunk() {
  local extra=$(($(chunks_of "$2") - $(chunks_of "$largest")))
  awk -v a="${cpu_median["$1 $2"]}" -v b="${cpu_median["$1 $largest"]}" -v n="$extra" 'BEGIN { printf "%.2f", (a - b) / n * 1e6 }'
}
for size in "${sizes[@]}"; do
  [ "$size" = "$largest" ] && continue
  printf 'CPU per chunk at %s (against %s, %d chunks more): sluice %s µs, dd %s µs\n' "$size" "$largest" \
    "$(($(chunks_of "$size") - $(chunks_of "$largest")))" "$(per_chunk sluice "$size")" "$(per_chunk dd "$size")"
done
