#!/bin/sh
# Makes the goal tree of the tree-copy comparison (shared by benchmarks/tree-copy.sh and the
# equivalence test): FILES regular files of 1 KiB to MAXKIB KiB (sizes cycle through the range),
# spread over a chain of 20 nested directories and a side directory at each level; symbolic
# links (to a file, to a directory, a dangling one), a hard link, a FIFO, names that are not
# UTF-8 and a 255-byte name, a read-only directory, varied modes and nanosecond times, files
# of another owner (when root), user.* extended attributes (where setfattr and the file system
# allow) and an access and a default ACL (where setfacl and the file system allow).
# Usage: benchmarks/tree-gen.sh DIR [FILES] [MAXKIB]   (defaults 2000, 256; DIR must not exist)
set -eu
dir=$1
files=${2:-2000}
maxkib=${3:-256}
[ ! -e "$dir" ] || { echo "tree-gen.sh: $dir exists" >&2; exit 64; }
mkdir -p "$dir"
cd "$dir"
# One block of random bytes to cut every file from.
head -c $((maxkib * 1024)) /dev/urandom > .blob
chain=""
level=0
while [ $level -le 20 ]; do
  mkdir -p "./$chain" "./${chain}side"
  level=$((level + 1))
  chain="${chain}d$(printf %02d $level)/"
done
i=0
while [ $i -lt "$files" ]; do
  level=$((i % 21))
  path=""
  l=0
  while [ $l -lt $level ]; do l=$((l + 1)); path="${path}d$(printf %02d $l)/"; done
  [ $(((i / 21) % 3)) -eq 1 ] && path="${path}side/"
  kib=$(( (i * 37) % maxkib + 1 ))
  head -c $((kib * 1024)) .blob > "./${path}f$i"
  i=$((i + 1))
done
rm .blob
ln -s f0 link-to-file
ln -s d01 link-to-dir
ln -s no/such/target dangling
ln f0 hard-link-to-f0
mkfifo fifo
printf 'x' > "$(printf 'caf\351')"
mkdir "$(printf 'dir-\377\376')"
printf 'y' > "$(printf 'dir-\377\376')/$(printf 'n\200me')"
long=$(printf '%0255d' 0 | tr 0 l)
printf 'z' > "$long"
printf p > private && chmod 600 private
printf e > executable && chmod 4755 executable
chmod 751 d01
chmod 640 d01/f1
touch -h -d '2001-02-03 04:05:06.123456789' link-to-file
touch -d '2011-12-13 14:15:16.987654321' f0 d01/d02
mkdir ro
printf 'r' > ro/inside
chmod 555 ro
if [ "$(id -u)" -eq 0 ]; then
  printf o > owned && chown 65534:65534 owned d01/side
  chown -h 65534:65534 link-to-dir
fi
printf n > noted
printf a > with-acl
if command -v setfattr >/dev/null 2>&1 && setfattr -n user.probe -v 1 noted 2>/dev/null; then
  setfattr -x user.probe noted
  setfattr -n user.comment -v "a note" noted
  setfattr -n user.binary -v 0sAAECAwQ= d01
fi
if command -v setfacl >/dev/null 2>&1 && setfacl -m u:65534:r with-acl 2>/dev/null; then
  setfacl -d -m u:65534:rx d01/d02/side
fi
# The times last: every entry made above has touched its directory.
touch -d '2015-06-07 08:09:10.111111111' d01/d02/d03
