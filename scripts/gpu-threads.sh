#!/usr/bin/env bash
# One sample of process PID's threads, for finding where a run that has
# stopped making progress waits: a header line, then one line a thread
# (tid, name, state, CPU seconds so far, wait channel) and, where the
# kernel lets it be read, the first frames of its kernel stack. Threads
# whose CPU time grows between samples are working; threads in S on
# futex_wait_queue for minutes are waiting on a lock or condition.
#
#   scripts/gpu-threads.sh PID
set -uo pipefail
pid=${1:?usage: gpu-threads.sh PID}
[ -d "/proc/$pid" ] || { echo "no process $pid"; exit 1; }
ticks=$(getconf CLK_TCK)
echo "== $(date -u +%H:%M:%S) pid $pid ($(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-120))"
for task in /proc/"$pid"/task/*; do
    tid=${task##*/}
    # Fields after the parenthesised name: 3 state, 14 utime, 15 stime.
    stat=$(sed 's/^.*) //' "$task/stat" 2>/dev/null) || continue
    read -r state _ <<< "$stat"
    cpu=$(awk -v t="$ticks" '{printf "%.1f", ($12 + $13) / t}' <<< "$stat")
    printf '  %s %s %s %ss %s\n' "$tid" "$(cat "$task/comm" 2>/dev/null)" "$state" "$cpu" \
        "$(cat "$task/wchan" 2>/dev/null)"
    head -n 4 "$task/stack" 2>/dev/null | sed 's/^/      /'
done
