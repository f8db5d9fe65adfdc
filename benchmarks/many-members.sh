#!/usr/bin/env bash
# The parallel decoder on files of many BGZF members (what `cat` of many bgzipped records gives):
# `decompress -c` at -p 1 and -p 2, wall time and peak RSS, medians of RUNS alternating runs from
# the page cache, each file decoded once first. Goals: -p 2 no slower than -p 1, and its peak RSS
# at most -p 1's plus 32 MiB; both succeed under `ulimit -v 2000000` (checked once each).
# Files: RECORDS tiny records, each a member and an empty member after it (bgzip's end-of-file
# marker: 1.4 MB for 20,000), and 4,000 members of 64 KiB of zeros (about 100 bytes compressed
# each: a batch's bytes are few, its output is not). With BASELINE=<another sluice> that build is
# measured beside SLUICE, alternating.
# Usage: benchmarks/many-members.sh [RUNS] [RECORDS]   (default 5 200000)
set -euo pipefail
runs=${1:-5}
records=${2:-200000}
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benchmarks/lib.sh
. "$here/benchmarks/lib.sh"  # median, now, sluice_binary
sluice=$(sluice_binary "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-members.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 - "$records" "$work" <<'EOF'
import struct, sys, zlib
records, work = int(sys.argv[1]), sys.argv[2]
def member(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    d = c.compress(data) + c.flush()
    size = 18 + len(d) + 8
    return (b'\x1f\x8b\x08\x04\0\0\0\0\0\xff\x06\0BC\x02\0' + struct.pack('<H', size - 1) + d
            + struct.pack('<II', zlib.crc32(data) & 0xffffffff, len(data)))
with open(f'{work}/records.gz', 'wb') as out:
    empty = member(b'')
    for i in range(records):
        out.write(member(b'record %d\n' % i) + empty)
with open(f'{work}/zeros.gz', 'wb') as out:
    out.write(member(bytes(65280)) * 4000)
EOF
builds=("$sluice")
[ -n "${BASELINE:-}" ] && builds+=("$BASELINE")
# Seconds and peak RSS (KiB) of one run: "seconds kib".
measure() {
  local start end kib
  start=$(now)
  kib=$( { /usr/bin/time -f %M "$@" > /dev/null; } 2>&1 | tail -n 1)
  end=$(now)
  echo "$(echo "$end - $start" | bc -l) $kib"
}
for file in records zeros; do
  path="$work/$file.gz"
  echo "$file.gz: $(stat -c %s "$path") bytes"
  for build in "${builds[@]}"; do
    for threads in 1 2; do
      "$build" decompress -p "$threads" -c "$path" > /dev/null
      if ! (ulimit -v 2000000 && "$build" decompress -p "$threads" -c "$path" > /dev/null 2>&1); then
        echo "  $build -p $threads: FAILED under ulimit -v 2000000"
      fi
    done
  done
  declare -A seconds=() peaks=()
  for round in $(seq "$runs"); do
    order=(1 2)
    (( round % 2 )) || order=(2 1)
    for build_index in "${!builds[@]}"; do
      for threads in "${order[@]}"; do
        read -r s k < <(measure "${builds[$build_index]}" decompress -p "$threads" -c "$path")
        seconds[$build_index,$threads]+=" $s"; peaks[$build_index,$threads]+=" $k"
      done
    done
  done
  for build_index in "${!builds[@]}"; do
    name=$([ "$build_index" = 0 ] && echo SLUICE || echo BASELINE)
    # shellcheck disable=SC2086
    one=$(median ${seconds[$build_index,1]}); two=$(median ${seconds[$build_index,2]})
    # shellcheck disable=SC2086
    rss1=$(median ${peaks[$build_index,1]}); rss2=$(median ${peaks[$build_index,2]})
    printf '  %-8s -p 1 %.3f s %6d KiB   -p 2 %.3f s %6d KiB   -p 2 / -p 1: %.2fx time, %+d KiB\n' \
      "$name" "$one" "$rss1" "$two" "$rss2" "$(echo "$two / $one" | bc -l)" "$((${rss2%.*} - ${rss1%.*}))"
  done
  unset seconds peaks
done
