#!/bin/bash
# bench-follow-idle.sh measures what following an idle projects directory
# costs hookwatch serve: it makes 100 projects × 20 sessions × 3 transcripts
# (6,000 files, last written 3 days ago), starts `BIN serve
# --watch-transcripts` over them in a fresh HOOKWATCH_HOME, and prints the
# CPU time (utime + stime, /proc/PID/stat) the collector used between 10 s
# and 70 s after its start. Linux only.
#
# Usage: scripts/bench-follow-idle.sh BIN [BIN…]   (run side by side)
set -eu

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
python3 - "$tree/projects" <<'PY'
import os, sys, time
root, old = sys.argv[1], time.time() - 72 * 3600
for p in range(100):
    for s in range(20):
        sess = f'{root}/-p{p}/s{s}'
        os.makedirs(sess + '/subagents', exist_ok=True)
        for f in (sess + '.jsonl', sess + '/subagents/agent-a.jsonl', sess + '/subagents/agent-b.jsonl'):
            with open(f, 'w') as out:
                out.write('{}\n')
            os.utime(f, (old, old))
PY

one() {
	local bin=$1 home pid a b
	home=$(mktemp -d)
	HOME=$home HOOKWATCH_HOME=$home "$bin" serve --addr 127.0.0.1:0 --codex-rollouts off \
		--watch-transcripts "$tree/projects" >/dev/null 2>&1 &
	pid=$!
	sleep 10
	a=$(awk '{print $14+$15}' /proc/$pid/stat)
	sleep 60
	b=$(awk '{print $14+$15}' /proc/$pid/stat)
	kill $pid
	wait $pid 2>/dev/null || true
	rm -rf "$home"
	echo "$bin: $(( b - a )) ticks of CPU in 60 s ($(getconf CLK_TCK) per second)"
}
for bin in "$@"; do one "$bin" & done
wait
