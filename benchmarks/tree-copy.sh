#!/usr/bin/env bash
# The tree-copy goal side by side with cp -a: the goal tree of benchmarks/tree-gen.sh (FILES
# files of 1 KiB to 256 KiB, 20 levels, links, a hard link, a FIFO, names that are not UTF-8,
# a read-only directory, another owner as root, xattrs and ACLs where possible), copied by
#   cp -a                        and  sluice copy -a --no-fsync   (goal: <= 1.0x the time)
#   cp -a, then sync             and  sluice copy -a              (durable; goal: <= 1.1x)
# each once a round, the order reversed every other round, the copy deleted and `sync` run between runs outside
# the timed region; medians of wall time, and sluice's peak RSS (GNU time). The copies are
# checked entry by entry with benchmarks/tree-compare.sh.
# The tree and the copies go under $TMPDIR (default /tmp). On ext4 without a journal, each
# create scans the inodes deleted in the last 30 seconds or so (ext4's recently_deleted()), so
# the copies this script deletes between runs come to dominate cp's time and sluice's alike;
# run it with TMPDIR on a journaled file system then (for example a loop-mounted ext4 image).
# Usage: [SLUICE=path] benchmarks/tree-copy.sh [RUNS] [FILES]   (defaults 3, 2000)
set -euo pipefail
runs=${1:-3}
files=${2:-2000}
[[ $runs =~ ^[1-9][0-9]*$ && $files =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [RUNS] [FILES]" >&2; exit 64; }
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # sluice_binary, run, median_seconds
# SLUICE: another build to measure (default: the binary README "Install" builds, built first).
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-tree.XXXXXX")
cleanup() { chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
sh "$here/benchmarks/tree-gen.sh" "$work/tree" "$files" 256
echo "tree: $(find "$work/tree" | wc -l) entries, $(du -sh "$work/tree" | cut -f1), file system $(df -T "$work" | awk 'NR==2 {print $2}')"


for round in $(seq "$runs"); do
  if (( round % 2 )); then
    run cp cp -a "$work/tree" "$work/out"
    run sluice-no-fsync "$sluice" copy -a --no-fsync "$work/tree" "$work/out"
    run cp-sync sh -c 'cp -a "$1" "$2" && sync' _ "$work/tree" "$work/out"
    run sluice "$sluice" copy -a "$work/tree" "$work/out"
  else
    run sluice "$sluice" copy -a "$work/tree" "$work/out"
    run cp-sync sh -c 'cp -a "$1" "$2" && sync' _ "$work/tree" "$work/out"
    run sluice-no-fsync "$sluice" copy -a --no-fsync "$work/tree" "$work/out"
    run cp cp -a "$work/tree" "$work/out"
  fi
done
sh "$here/benchmarks/tree-compare.sh" "$work/tree" "$work/out" >/dev/null || echo "warning: the last copy differs from the tree (see tree-compare.sh)"
rm -rf "$work/out"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f %M -o "$work/rss" "$sluice" copy -a --no-fsync "$work/tree" "$work/out"
  rss="$(cat "$work/rss") KiB"
else
  rss="not measured (GNU time is missing)"
fi
cp=$(median_seconds "$work/cp.times"); quick=$(median_seconds "$work/sluice-no-fsync.times")
cpsync=$(median_seconds "$work/cp-sync.times"); durable=$(median_seconds "$work/sluice.times")
echo "runs: $runs, files: $files"
echo "cp -a:                      $cp s"
echo "sluice copy -a --no-fsync:  $quick s  ($(echo "scale=2; $quick / $cp" | bc)x cp -a; goal <= 1.0x)"
echo "cp -a; sync:                $cpsync s"
echo "sluice copy -a:             $durable s  ($(echo "scale=2; $durable / $cpsync" | bc)x; goal <= 1.1x)"
echo "sluice peak RSS (--no-fsync): $rss"
