#!/usr/bin/env bash
# Many small files in one directory: `sluice copy files/* dst/` against `cp`, alternating, one
# warm-up discarded, medians of RUNS; peak RSS per count (flat from 500 to 5,000 files); W=1
# (--jobs 1) against the default width.
# Usage: benchmarks/many-files.sh [RUNS] [COUNTS...]   (defaults 5, and 500 2000 5000)
# Files are 1 KiB to 256 KiB (mixed, fixed seed). Takes SLUICE (default: the binary
# README "Install" builds, built first; lib.sh).
# Peak RSS is the median of RUNS runs; with BASELINE=path/to/another/sluice, that build's peak RSS
# is measured too, alternating with SLUICE's, and the ratio printed.
set -euo pipefail
runs=${1:-5}
shift || true
if [ $# -eq 0 ]; then counts=(500 2000 5000); else counts=("$@"); fi
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-many.XXXXXX")
trap 'rm -rf "$work"' EXIT

make_files() {  # count
  rm -rf "$work/files"; mkdir "$work/files"
  awk -v n="$1" 'BEGIN { srand(16); for (i = 0; i < n; i++) printf "%d %d\n", i, 1024 + int(rand() * 255 * 1024) }' |
    while read -r i size; do head -c "$size" /dev/urandom > "$work/files/f$i"; done
  cat "$work/files"/* > /dev/null
}
fresh() { rm -rf "$work/dst"; mkdir "$work/dst"; }
run_cp() { (cd "$work/files" && cp -- * "$work/dst/"); }
run_cp_sync() { run_cp; sync; }
run_sluice() { (cd "$work/files" && "$sluice" copy "$@" -- * "$work/dst/"); }

# Alternates `a` and `b` (each after fresh()), one warm-up of each discarded; prints both medians.
compare() {  # label-a label-b command-a... -- command-b...
  local label_a=$1 label_b=$2; shift 2
  local a=() b=(); while [ "$1" != "--" ]; do a+=("$1"); shift; done; shift; b=("$@")
  fresh; "${a[@]}"; fresh; "${b[@]}"
  local ta=() tb=()
  for _ in $(seq "$runs"); do
    fresh; ta+=("$(time_it "${a[@]}")")
    fresh; tb+=("$(time_it "${b[@]}")")
  done
  local ma mb; ma=$(median "${ta[@]}"); mb=$(median "${tb[@]}")
  printf '  %-28s %7.3f s\n  %-28s %7.3f s   ratio %.2fx\n' "$label_a" "$ma" "$label_b" "$mb" "$(echo "$mb / $ma" | bc -l)"
}

baseline=${BASELINE:-}

# Peak RSS (KiB) of one `BUILD copy ARGS... -- files/* dst/` into a fresh dst/.
rss_of() {  # build args...
  fresh; peak_rss_kib bash -c 'cd "$0/files" && exec "$@" -- * "$0/dst/"' "$work" "$1" copy "${@:2}"
}

# Median peak RSS (KiB) of `sluice copy ARGS...` over RUNS runs, for one build or, with
# BASELINE, for both alternately: prints one line per build.
peak_rss() {  # label args...
  local label=$1; shift
  local a=() b=()
  for _ in $(seq "$runs"); do
    a+=("$(rss_of "$sluice" "$@")")
    if [ -n "$baseline" ]; then b+=("$(rss_of "$baseline" "$@")"); fi
  done
  local ma; ma=$(median "${a[@]}")
  printf '  peak RSS, %-19s %6d KiB (%s)\n' "$label:" "$ma" "${a[*]}"
  if [ -n "$baseline" ]; then
    local mb; mb=$(median "${b[@]}")
    printf '  peak RSS, %-19s %6d KiB (%s), baseline, ratio %.3fx\n' "$label:" "$mb" "${b[*]}" "$(echo "$ma / $mb" | bc -l)"
  fi
}

printf 'sluice %s, %d runs each (median), %s processors\n' "$sluice" "$runs" "$(nproc)"
[ -z "$baseline" ] || printf 'baseline %s\n' "$baseline"
for count in "${counts[@]}"; do
  make_files "$count"
  printf '%d files, %s MiB\n' "$count" "$(du -sm "$work/files" | cut -f1)"
  peak_rss "copy --no-fsync" --no-fsync
  peak_rss "copy (durable)"
  compare "cp" "sluice copy --no-fsync" run_cp -- run_sluice --no-fsync
  compare "cp; sync" "sluice copy (durable)" run_cp_sync -- run_sluice
  compare "sluice copy --jobs 1" "sluice copy (default jobs)" run_sluice --jobs 1 -- run_sluice
done
