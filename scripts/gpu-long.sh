#!/usr/bin/env bash
# Runs a long GPU job (longer than one device call may run) ON the GPU
# machine, in a process session of its own so that it outlives the call
# that started it, while later calls on the same warm machine follow it.
#
#   scripts/gpu-long.sh start DIR COMMAND...   start COMMAND in DIR's job
#   scripts/gpu-long.sh wait DIR SECONDS       follow it for up to SECONDS
#
# `start` runs COMMAND (for example `scripts/gpu-filecoin.sh cc:32GiB
# setup:porep:32GiB bench:porep:32GiB:1` with OUT=DIR) with its output in
# DIR/console.log, samples the host's memory every 5 s into
# DIR/host-mem.txt (unix time, used MiB, available MiB), every cuzk
# process's threads every 10 s into DIR/threads.txt (scripts/gpu-threads.sh:
# state, wait channel, CPU time, kernel stack: where a stalled run waits),
# and writes DIR/exit with COMMAND's exit status when it ends. `wait` returns when the
# job has ended or SECONDS have passed, printing the end of the console
# and the memory samples' peak; it exits 0 once the job has ended, 3 while
# it still runs, and 4 at once when DIR holds no job (nothing was started
# there, or the machine was given back and this is a fresh one). A job
# lives only as long as the machine: each call must follow the last within
# the machine's warm time (30 s on the H200), so the call that starts a
# job should return early and copy little.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,20p' "$0"; exit 2; }
[ $# -ge 2 ] || usage
verb=$1 dir=$2
shift 2
mkdir -p "$dir"

case $verb in
    start)
        [ $# -ge 1 ] || usage
        rm -f "$dir/exit"
        date -u > "$dir/started"
        setsid bash -c '
            dir=$1; shift
            while sleep 5; do
                echo "$(date +%s) $(free -m | awk "/^Mem:/ {print \$3, \$7}")"
            done > "$dir/host-mem.txt" &
            sampler=$!
            while sleep 10; do
                for pid in $(pgrep -x cuzk); do scripts/gpu-threads.sh "$pid"; done
            done > "$dir/threads.txt" 2>&1 &
            threads=$!
            "$@" > "$dir/console.log" 2>&1
            echo $? > "$dir/exit"
            kill $sampler $threads
        ' gpu-long "$dir" "$@" < /dev/null > /dev/null 2>&1 &
        echo "started in $dir: $*"
        ;;
    wait)
        if [ ! -f "$dir/started" ]; then
            echo "no job in $dir: none was started there, or this is a fresh machine"
            exit 4
        fi
        seconds=${1:-540}
        end=$(( $(date +%s) + seconds ))
        while [ ! -f "$dir/exit" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 5; done
        tail -n 40 "$dir/console.log" 2>/dev/null
        sort -k2 -n "$dir/host-mem.txt" 2>/dev/null | tail -n 1 \
            | awk '{print "host memory peak so far: " $2 " MiB used (" $3 " MiB available then)"}'
        tail -n 1 "$dir/gpu-samples.csv" 2>/dev/null | sed 's/^/last GPU sample: /'
        # The last thread sample's busy or blocked threads, in short.
        awk '/^== /{block=""} {block=block $0 "\n"} END{printf "%s", block}' \
            "$dir/threads.txt" 2>/dev/null | grep -E "^(==|  [0-9]+ .* (R|D) )" | head -n 20
        if [ -f "$dir/exit" ]; then
            echo "job ended, exit $(cat "$dir/exit")"
            exit 0
        fi
        echo "job still running"
        exit 3
        ;;
    *) usage ;;
esac
