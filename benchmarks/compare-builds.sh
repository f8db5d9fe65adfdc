#!/usr/bin/env bash
# Two builds of sluice side by side on the copy paths a restructuring can slow: a tree
# (benchmarks/tree-gen.sh, FILES files) copied with copy -a --no-fsync, FILES small files of one
# directory as operands (copy --no-fsync files/* dst/), and one file of SIZE copied by the table's
# path and by --pipeline (--no-fsync). Each command of the two builds once a round, the order
# reversed every other round, the copy deleted and `sync` run between runs outside the timed
# region; medians of wall time and the ratio NEW/OLD. Runs in $TMPDIR (default /tmp): a tmpfs
# measures the code rather than the device.
# Usage: benchmarks/compare-builds.sh OLD NEW [RUNS] [FILES] [SIZE]   (defaults 15, 2000, 256M)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD NEW [RUNS] [FILES] [SIZE]" >&2; exit 64; }
old=$1 new=$2 runs=${3:-15} files=${4:-2000} size=${5:-256M}
[[ $runs =~ ^[1-9][0-9]*$ && $files =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 OLD NEW [RUNS] [FILES] [SIZE]" >&2; exit 64; }
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # run, median_seconds
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-builds.XXXXXX")
cleanup() { chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
sh "$here/benchmarks/tree-gen.sh" "$work/tree" "$files" 256 >/dev/null
mkdir "$work/files"
for i in $(seq 1 "$files"); do head -c $(( (i * 7919) % 262144 + 1024 )) /dev/urandom > "$work/files/f$i"; done
head -c "$size" /dev/urandom > "$work/big"
tree() { "$1" copy -a --no-fsync "$work/tree" "$work/out" >/dev/null; }
many() { mkdir "$work/out" && (cd "$work/files" && "$1" copy --no-fsync -- * "$work/out/"); }
table() { "$1" copy --no-fsync "$work/big" "$work/out"; }
pipeline() { "$1" copy --no-fsync --pipeline "$work/big" "$work/out"; }
workloads=(tree many table pipeline)
for w in "${workloads[@]}"; do run "warm-$w" "$w" "$new"; run "warm-$w" "$w" "$old"; done
for round in $(seq 1 "$runs"); do
  for w in "${workloads[@]}"; do
    if (( round % 2 )); then run "$w-old" "$w" "$old"; run "$w-new" "$w" "$new"
    else run "$w-new" "$w" "$new"; run "$w-old" "$w" "$old"; fi
  done
done
printf '%s processors, %s runs each, %s files, %s; file system %s\n' "$(nproc)" "$runs" "$files" "$size" \
  "$(df -T "$work" | awk 'NR==2 {print $2}')"
printf '%-10s %10s %10s %8s\n' workload "old (s)" "new (s)" new/old
for w in "${workloads[@]}"; do
  o=$(median_seconds "$work/$w-old.times") n=$(median_seconds "$work/$w-new.times")
  printf '%-10s %10s %10s %8s\n' "$w" "$o" "$n" "$(echo "scale=3; $n / $o" | bc)"
done
