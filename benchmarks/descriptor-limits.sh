#!/usr/bin/env bash
# A tree of 2,000 small files (40 directories of 25 files, each with a subdirectory of 25) copied
# with `sluice copy -r` under `ulimit -n` LIMITS against the same under 1,024, alternating, one
# warm-up discarded, medians of RUNS; with --no-fsync and durable. Each run starts with only
# standard input, output and error open, as from a terminal, and is checked: every file byte for
# byte (`diff -r`), exit 0, no temporary file left.
# Usage: benchmarks/descriptor-limits.sh [RUNS] [LIMITS...]   (defaults 5, and 16 32 64)
# Takes SLUICE (default: the binary README "Install" builds, built first; lib.sh).
set -euo pipefail
runs=${1:-5}
shift || true
if [ $# -eq 0 ]; then limits=(16 32 64); else limits=("$@"); fi
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-limits.XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir "$work/src"
for d in $(seq 1 40); do
  mkdir -p "$work/src/d$d/e"
  for f in $(seq 1 25); do
    head -c $((100 + (d * 37 + f * 101) % 4000)) /dev/urandom > "$work/src/d$d/f$f"
    head -c $((100 + (d * 53 + f * 89) % 4000)) /dev/urandom > "$work/src/d$d/e/g$f"
  done
done
cat "$work"/src/*/* "$work"/src/*/e/* > /dev/null 2>&1 || true

# sluice copy -r under `ulimit -n $1`, with every descriptor above 2 closed first.
run_at() {  # limit flags...
  local limit=$1; shift
  rm -rf "$work/dst"
  (
    for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
    ulimit -n "$limit"
    exec "$sluice" copy -r "$@" "$work/src" "$work/dst"
  )
}

check() {  # limit flags...
  run_at "$@" || { echo "exit $? under ulimit -n $1" >&2; exit 1; }
  diff -r "$work/src" "$work/dst" > /dev/null || { echo "copy differs under ulimit -n $1" >&2; exit 1; }
  [ -z "$(find "$work/dst" -name '.sluice-*')" ] || { echo "temporary left under ulimit -n $1" >&2; exit 1; }
}

printf 'sluice %s, %d runs each (median), %s processors, %s files\n' "$sluice" "$runs" "$(nproc)" "$(find "$work/src" -type f | wc -l)"
for flags in --no-fsync ""; do
  label=${flags:-durable}
  for limit in "${limits[@]}"; do
    check "$limit" $flags
    check 1024 $flags
    ta=(); tb=()
    for _ in $(seq "$runs"); do
      ta+=("$(time_it run_at 1024 $flags)")
      tb+=("$(time_it run_at "$limit" $flags)")
    done
    ma=$(median "${ta[@]}"); mb=$(median "${tb[@]}")
    printf '  %-9s ulimit -n 1024 %7.3f s   ulimit -n %-4s %7.3f s   ratio %.2fx\n' "$label" "$ma" "$limit" "$mb" "$(echo "$mb / $ma" | bc -l)"
  done
done
