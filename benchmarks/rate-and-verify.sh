#!/usr/bin/env bash
# The goals of --limit-rate and --verify, measured: wall time and peak RSS (/usr/bin/time) of
# copy, compress and decompress of SIZE_MIB of random data with and without --limit-rate 50M,
# then `copy` of VERIFY_MIB from the page cache with and without --verify (both with fsync).
# Medians of RUNS, in alternating order; destinations deleted between runs, outside the timing.
# Usage: benchmarks/rate-and-verify.sh [SIZE_MIB] [VERIFY_MIB] [RUNS]   (defaults 200 1024 3)
set -euo pipefail
size_mib=${1:-200}
verify_mib=${2:-1024}
runs=${3:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # median, now
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
head -c "$((size_mib * 1024 * 1024))" /dev/urandom > "$work/src"
"$sluice" compress -o "$work/src.gz" "$work/src"
# Runs "$@" RUNS times after one warm-up; prints "median-seconds median-peak-RSS-KiB".
measure() {
  local seconds=() rss=() line
  "$@" >/dev/null 2>&1; rm -f "$work/dst"
  for _ in $(seq "$runs"); do
    cat "$work/src" "$work/src.gz" > /dev/null
    line=$(/usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -1)
    seconds+=("${line% *}"); rss+=("${line#* }")
    rm -f "$work/dst"
  done
  echo "$(median "${seconds[@]}") $(median "${rss[@]}")"
}
report() { printf '%-34s %6.2f s  %6.1f MiB peak RSS\n' "$1" "${2% *}" "$(echo "${2#* } / 1024" | bc -l)"; }
printf '%d MiB of random data, %d runs each (median)\n' "$size_mib" "$runs"
for limit in "" "--limit-rate 50M"; do
  # shellcheck disable=SC2086
  report "copy $limit" "$(measure "$sluice" copy $limit "$work/src" "$work/dst")"
  # shellcheck disable=SC2086
  report "compress $limit" "$(measure "$sluice" compress $limit -o "$work/dst" "$work/src")"
  # shellcheck disable=SC2086
  report "decompress $limit" "$(measure "$sluice" decompress $limit -o "$work/dst" "$work/src.gz")"
done
rm -f "$work/src.gz"
head -c "$((verify_mib * 1024 * 1024))" /dev/urandom > "$work/src"
cat "$work/src" > /dev/null
plain=(); verified=()
for round in $(seq 0 "$runs"); do
  for mode in plain verify; do
    [ "$(( round % 2 ))" = 1 ] && mode=$([ "$mode" = plain ] && echo verify || echo plain)
    cat "$work/src" > /dev/null
    start=$(now)
    if [ "$mode" = verify ]; then "$sluice" copy --verify "$work/src" "$work/dst"; else "$sluice" copy "$work/src" "$work/dst"; fi
    elapsed=$(echo "$(now) - $start" | bc -l)
    rm -f "$work/dst"
    [ "$round" = 0 ] && continue
    if [ "$mode" = verify ]; then verified+=("$elapsed"); else plain+=("$elapsed"); fi
  done
done
plain_median=$(median "${plain[@]}"); verified_median=$(median "${verified[@]}")
printf '%d MiB from the page cache, copy with fsync: %.2f s, with --verify: %.2f s, ratio %.2fx\n' \
  "$verify_mib" "$plain_median" "$verified_median" "$(echo "$verified_median / $plain_median" | bc -l)"
