#!/bin/sh
# Compares two copies of a tree entry by entry, as the tree-copy goal states it: a find listing
# (type, mode, owner, group, modification time to the nanosecond, link target, link count),
# the extended attributes (getfattr, where installed) and the ACLs (getfacl, where installed),
# and cmp of every regular file. Directory access times are left out: reading a tree changes
# them. Prints the first differences and exits 1 if there are any.
# Usage: benchmarks/tree-compare.sh EXPECTED ACTUAL
set -eu
expected=$(cd "$1" && pwd)
actual=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tree-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
listing() { (cd "$1" && find . -printf '%P %y %m %U %G %T@ %l %n\n' | LC_ALL=C sort); }
listing "$expected" > "$work/expected.find"
listing "$actual" > "$work/actual.find"
cmp -s "$work/expected.find" "$work/actual.find" || { echo "find listings differ:"; diff "$work/expected.find" "$work/actual.find" | head -20; status=1; }
if command -v getfattr >/dev/null 2>&1; then
  (cd "$expected" && getfattr -R -h -d -m - . 2>/dev/null) > "$work/expected.xattr" || true
  (cd "$actual" && getfattr -R -h -d -m - . 2>/dev/null) > "$work/actual.xattr" || true
  cmp -s "$work/expected.xattr" "$work/actual.xattr" || { echo "extended attributes differ:"; diff "$work/expected.xattr" "$work/actual.xattr" | head -20; status=1; }
else
  echo "skipped: extended attributes (getfattr is not installed: apt-get install attr)"
fi
if command -v getfacl >/dev/null 2>&1; then
  (cd "$expected" && getfacl -R -P . 2>/dev/null) > "$work/expected.acl" || true
  (cd "$actual" && getfacl -R -P . 2>/dev/null) > "$work/actual.acl" || true
  cmp -s "$work/expected.acl" "$work/actual.acl" || { echo "ACLs differ:"; diff "$work/expected.acl" "$work/actual.acl" | head -20; status=1; }
else
  echo "skipped: ACLs (getfacl is not installed: apt-get install acl)"
fi
(cd "$expected" && find . -type f -print0) | (cd "$expected" && xargs -0 -I{} sh -c 'cmp -s "$1" "$2/$1" || echo "contents differ: $1"' _ {} "$actual") > "$work/cmp"
[ ! -s "$work/cmp" ] || { head -20 "$work/cmp"; status=1; }
exit $status
