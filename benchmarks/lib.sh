# Shared helpers for the benchmark scripts: source it.
now() { date +%s.%N; }
# Seconds the command takes, wall clock.
time_it() { local start end; start=$(now); "$@"; end=$(now); echo "$end - $start" | bc -l; }
# The median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# Peak resident set size in KiB of the command (GNU time's "Maximum resident set size").
peak_rss_kib() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'; }
