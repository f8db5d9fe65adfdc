#!/usr/bin/env bash
# The copy paths side by side with cp (coreutils, which uses FICLONE and copy_file_range), warm,
# each command once a round in alternating order, the destination deleted and `sync` run
# between runs outside the timed region; medians. As root (it loop-mounts its file systems).
#   the file system of the directory this runs in ($TMPDIR), a journaled ext4 loop image and a
#     tmpfs: 1 GiB of random bytes, cp against sluice copy --no-fsync (the table's path:
#     copy_file_range on ext4 and tmpfs) and --pipeline; durable, cp then sync against sluice
#     copy; sluice copy --verify (the pipeline there) against cp, sync, cmp
#   XFS with reflink, a 3 GiB loop image: 1 GiB, sluice copy (clone) --no-fsync and durable, the
#     space used before and after (df); cp for reference; --reflink=never (the pipeline)
#   XFS without reflink: the clone refused, copy_file_range; against --pipeline and cp
#   ext4, sparse: 1 GiB with three 64 KiB data extents, and 1 GiB with 10,000 data extents of
#     4 KiB: time and allocated bytes (du) against cp, bytes compared
# The loop images are allocated whole (fallocate) and ext4's inode tables and journal written by
# mkfs, not in the background after the mount: a run measures the copy, not the first writes to a
# sparse image file's blocks nor ext4's lazy initialisation beside it.
# Usage: benchmarks/copy-paths.sh [RUNS]   (default 5)
set -euo pipefail
runs=${1:-5}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [RUNS]" >&2; exit 64; }
[ "$(id -u)" -eq 0 ] || { echo "copy-paths.sh: loop mounts need root" >&2; exit 1; }
for tool in cp python3 fallocate mkfs.xfs mkfs.ext4 mount umount cmp du df; do
  command -v "$tool" >/dev/null || { echo "copy-paths.sh: $tool is missing" >&2; exit 1; }
done
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # sluice_binary, median, now
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-paths.XXXXXX")
mounts=()
cleanup() {
  for mountPoint in "${mounts[@]}"; do umount "$mountPoint" 2>/dev/null || umount -l "$mountPoint" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# compare DST COMMAND... : runs each "label|command" (DST as the destination, src beside it),
# alternating, the source read into the page cache before each, and prints the median of each
# and every run's time, in the order they ran.
compare() {
  local dst=$1; shift
  local -a labels=() commands=()
  local entry
  for entry in "$@"; do labels+=("${entry%%|*}"); commands+=("${entry#*|}"); done
  local -A times=()
  local round index order start end
  for round in $(seq 0 "$runs"); do
    order=$(seq 0 $(( ${#commands[@]} - 1 )))
    (( round % 2 )) && order=$(echo "$order" | tac)
    for index in $order; do
      rm -f "$dst"; sync
      cat "${dst%/*}/src" > /dev/null  # page-cached, whatever the last run evicted
      start=$(now); eval "${commands[$index]}"; end=$(now)
      (( round > 0 )) && times[$index]+="$(echo "$end - $start" | bc -l) "
    done
  done
  for index in "${!commands[@]}"; do
    # shellcheck disable=SC2086
    printf '  %-34s %8.4f s   (%s)\n' "${labels[$index]}" "$(median ${times[$index]})" \
      "$(printf '%.3f\n' ${times[$index]} | paste -sd ' ')"
  done
}
used_kib() { df -k --output=used "$1" | tail -1 | tr -d ' '; }
sparse_file() {  # PATH SIZE EXTENTS EXTENT_SIZE: EXTENTS extents of random bytes, evenly spread
  python3 - "$@" <<'PY'
import os, sys
path, size, count, extent = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with open(path, "wb") as f:
    f.truncate(size)
    step = size // count
    for i in range(count):
        f.seek(i * step + step // 2 // 4096 * 4096)
        f.write(os.urandom(extent))
PY
}

echo "sluice copy paths, $runs runs each (median), $(uname -r)"

for fs in here ext4-journal tmpfs; do
  dir=$work/$fs
  mkdir -p "$dir"
  case $fs in
    tmpfs) mount -t tmpfs -o size=2600M tmpfs "$dir"; mounts+=("$dir") ;;
    ext4-journal)
      fallocate -l 3G "$work/ext4.img"
      mkfs.ext4 -q -F -j -E lazy_itable_init=0,lazy_journal_init=0 "$work/ext4.img"
      mount -o loop "$work/ext4.img" "$dir"; mounts+=("$dir") ;;
  esac
  head -c $((1 << 30)) /dev/urandom > "$dir/src"
  cat "$dir/src" > /dev/null
  echo "$fs ($(stat -f -c %T "$dir")), 1 GiB of random bytes:"
  compare "$dir/dst" "cp|cp $dir/src $dir/dst" \
    "sluice copy --no-fsync (table)|$sluice copy --no-fsync $dir/src $dir/dst" \
    "sluice copy --no-fsync --pipeline|$sluice copy --no-fsync --pipeline $dir/src $dir/dst"
  compare "$dir/dst" "cp; sync|cp $dir/src $dir/dst && sync" \
    "sluice copy (durable)|$sluice copy $dir/src $dir/dst"
  compare "$dir/dst" "cp; sync; cmp|cp $dir/src $dir/dst && sync && cmp $dir/src $dir/dst" \
    "sluice copy --verify|$sluice copy --verify $dir/src $dir/dst"
  rm -f "$dir/dst"; "$sluice" copy -v --no-fsync "$dir/src" "$dir/dst" 2>&1 | sed 's/^/  /'; rm -f "$dir/dst"
  rm -f "$dir/src"
done

for reflink in 1 0; do
  image=$work/xfs-$reflink.img; dir=$work/xfs-$reflink
  mkdir -p "$dir"; fallocate -l 3G "$image"
  mkfs.xfs -q -f -m reflink=$reflink "$image"; mount -o loop "$image" "$dir"; mounts+=("$dir")
  head -c $((1 << 30)) /dev/urandom > "$dir/src"; sync
  cat "$dir/src" > /dev/null
  echo "XFS, reflink=$reflink, 3 GiB image, 1 GiB of random bytes:"
  if [ "$reflink" = 1 ]; then
    compare "$dir/dst" "cp|cp $dir/src $dir/dst" \
      "sluice copy --no-fsync (clone)|$sluice copy --no-fsync $dir/src $dir/dst" \
      "sluice copy (clone, durable)|$sluice copy $dir/src $dir/dst" \
      "sluice copy --no-fsync --reflink=never|$sluice copy --no-fsync --reflink=never $dir/src $dir/dst"
    rm -f "$dir/dst"; sync; before=$(used_kib "$dir")
    "$sluice" copy -v --no-fsync "$dir/src" "$dir/dst" 2>&1 | sed 's/^/  /'
    sync; after=$(used_kib "$dir")
    echo "  df: $before KiB used before, $after KiB after the clone: $((after - before)) KiB more"
  else
    compare "$dir/dst" "cp|cp $dir/src $dir/dst" \
      "sluice copy --no-fsync (table)|$sluice copy --no-fsync $dir/src $dir/dst" \
      "sluice copy --no-fsync --pipeline|$sluice copy --no-fsync --pipeline $dir/src $dir/dst"
    rm -f "$dir/dst"; "$sluice" copy -v --no-fsync "$dir/src" "$dir/dst" 2>&1 | sed 's/^/  /'
  fi
done

dir=$work/ext4-sparse; mkdir -p "$dir"
for extents in "3 65536" "10000 4096"; do
  set -- $extents
  sparse_file "$dir/src" $((1 << 30)) "$1" "$2"
  cat "$dir/src" > /dev/null
  echo "ext4, 1 GiB with $1 data extents of $2 bytes (source: $(du -k "$dir/src" | cut -f1) KiB allocated):"
  compare "$dir/dst" "cp|cp $dir/src $dir/dst" \
    "sluice copy --no-fsync|$sluice copy --no-fsync $dir/src $dir/dst"
  rm -f "$dir/dst"; cp "$dir/src" "$dir/cp-dst"
  "$sluice" copy -v --no-fsync "$dir/src" "$dir/dst" 2>&1 | sed 's/^/  /'
  cmp "$dir/src" "$dir/dst" && cmp "$dir/cp-dst" "$dir/dst" && echo "  bytes identical"
  echo "  du: cp $(du -k "$dir/cp-dst" | cut -f1) KiB, sluice $(du -k "$dir/dst" | cut -f1) KiB"
  rm -f "$dir/src" "$dir/dst" "$dir/cp-dst"
done
