#!/bin/bash
# bench-stale-guard.sh measures what the stale-context guard costs whole hook
# processes (docs/benchmarks.md): the lean hook on a Read's PostToolUse of a
# 10 KiB file (collector down: each run spools), and on a SessionStart(resume)
# of a session that read 100 files, against a real `hookwatch serve` on a
# temporary home; each with the guard on and off (HOOKWATCH_STALE_GUARD=0),
# in interleaved rounds. It prints wall time and the hook processes' CPU time
# (user + sys) per run. Needs go, python3 and curl; listens on 127.0.0.1:7499.
#
# Usage: scripts/bench-stale-guard.sh [RUNS]   (runs per round; default 50)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
N="${1:-50}"
D="$(mktemp -d)"
trap 'kill "${SP:-0}" 2>/dev/null || true; rm -rf "$D"' EXIT
(cd "$repo" && go build -o "$D/hookwatch" ./cmd/hookwatch && go build -o "$D/hookwatch-hook" ./cmd/hookwatch-hook)
mkdir -p "$D/files" "$D/home"
for i in $(seq 100); do head -c 10240 /dev/urandom | base64 >"$D/files/f$i.txt"; done
S=5a2b0c4e-0000-4000-8000-0000000000b1
p() { python3 -c "import json,sys; m=dict(session_id='$S',cwd='$D/files',transcript_path='$D/t/-p/$S.jsonl'); m.update(json.loads(sys.argv[1])); print(json.dumps(m))" "$1" >"$2"; }
read1='{"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"'$D'/files/f1.txt"},"tool_use_id":"toolu_x","tool_response":{}}'
p "$read1" "$D/read.json"
p '{"hook_event_name":"SessionStart","source":"resume"}' "$D/resume.json"

# rounds LABEL PAYLOAD: N runs with the guard on, then off, five times.
rounds() {
	for r in 1 2 3 4 5; do
		for g in 1 0; do
			out=$({ time -p (for i in $(seq "$N"); do HOOKWATCH_STALE_GUARD=$g "$D/hookwatch-hook" <"$2" >/dev/null; done); } 2>&1)
			w=$(echo "$out" | awk '/^real/{print $2}') u=$(echo "$out" | awk '/^user/{print $2}') s=$(echo "$out" | awk '/^sys/{print $2}')
			echo "$1 guard=$g: wall $(echo "$w*1000000/$N" | bc) µs/run, hook CPU $(echo "($u+$s)*1000000/$N" | bc) µs/run"
		done
	done
}

export HOOKWATCH_HOME="$D/home-down" HOOKWATCH_URL=http://127.0.0.1:1 HOOKWATCH_AUTOSTART=0
rounds "Read PostToolUse (collector down)" "$D/read.json"

export HOOKWATCH_HOME="$D/home" HOOKWATCH_URL=http://127.0.0.1:7499
HOME="$D/home" "$D/hookwatch" serve --addr 127.0.0.1:7499 --watch-transcripts off --codex-rollouts off >"$D/serve.log" 2>&1 &
SP=$!
for _ in $(seq 50); do curl -sf "$HOOKWATCH_URL/healthz" >/dev/null && break; sleep 0.2; done
p '{"hook_event_name":"SessionStart","source":"startup"}' "$D/ev.json"
"$D/hookwatch-hook" <"$D/ev.json"
for i in $(seq 100); do
	p '{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"'$D/files/f$i.txt'"},"tool_use_id":"toolu_'$i'"}' "$D/ev.json"
	"$D/hookwatch-hook" <"$D/ev.json"
	p '{"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"'$D/files/f$i.txt'"},"tool_use_id":"toolu_'$i'","tool_response":{}}' "$D/ev.json"
	"$D/hookwatch-hook" <"$D/ev.json"
done
curl -sf "$HOOKWATCH_URL/v1/sessions/$S" >/dev/null # waits for the model
echo "files the collector lists: $(curl -sf "$HOOKWATCH_URL/v1/sessions/$S/files" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["files"]))')"
touch "$D/files/f7.txt"
echo changed >>"$D/files/f9.txt"
echo "the answer: $("$D/hookwatch-hook" <"$D/resume.json")"
rounds "SessionStart(resume), 100 files, 1 changed" "$D/resume.json"
