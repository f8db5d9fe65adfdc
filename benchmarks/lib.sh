# Shared helpers for the benchmark scripts: source it.
now() { date +%s.%N; }
# Seconds the command takes, wall clock.
time_it() { local start end; start=$(now); "$@"; end=$(now); echo "$end - $start" | bc -l; }
# The median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# Peak resident set size in KiB of the command (GNU time's "Maximum resident set size").
peak_rss_kib() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'; }
# The sluice to measure: $SLUICE when set, else the binary README "Install" builds, the one a user
# runs: release, the Swift runtime linked in (--static-swift-stdlib), built into .build/static
# (.ci/static-binary checks that same build). The runtime linked dynamically costs every run its loading
# (a 1-file tree copy: 8.7 ms against 6.1 ms, `cp -a` 1.8 ms) and every call into it a jump
# through the PLT. Prints the binary's path. Usage: sluice=$(sluice_binary "$here")
sluice_binary() {
  if [ -n "${SLUICE:-}" ]; then echo "$SLUICE"; return; fi
  local flags=(-c release --static-swift-stdlib --product sluice --package-path "$1" --scratch-path "$1/.build/static")
  # Without the benchmark's TMPDIR: SwiftPM leaves its temporary directories and locks there.
  env -u TMPDIR swift build "${flags[@]}" >/dev/null || return 1
  local bin
  bin=$(env -u TMPDIR swift build "${flags[@]}" --show-bin-path) || return 1
  echo "$bin/sluice"
}
# run NAME COMMAND...: one timed run of COMMAND into $work/NAME.times (nanoseconds), its copy
# at $work/out, which is deleted (made writable first) and `sync` run before, outside the timing.
run() {
  local name=$1; shift
  chmod -R u+w "$work/out" 2>/dev/null || true
  rm -rf "$work/out"; sync
  local start; start=$(date +%s%N)
  "$@"
  echo $(( $(date +%s%N) - start )) >> "$work/$name.times"
}
# median_seconds FILE: the median of the nanoseconds FILE holds, one a line, in seconds.
median_seconds() { sort -n "$1" | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.4f", m / 1e9}'; }
