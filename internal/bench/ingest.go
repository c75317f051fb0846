package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// samplePayloads is one Claude Code session of the repository's corpus
// (testdata/payloads/claude-code-2.1.197.jsonl: prompts, tool calls, two
// subagents, compaction) and the start of a Codex one, a payload per line.
// It is compiled in so that the ingest benchmark reads no file at run time.
const samplePayloads = `{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"SessionStart","source":"startup"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"InstructionsLoaded","file_path":"/home/dev/src/demo/CLAUDE.md","memory_type":"Project","load_reason":"session_start"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","hook_event_name":"UserPromptSubmit","prompt":"tidy the project"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/src/demo/main.go"},"tool_use_id":"toolu_00000005"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/src/demo/main.go"},"tool_response":{"type":"text","file":{"filePath":"/home/dev/src/demo/main.go","content":"package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n","numLines":6,"startLine":1,"totalLines":6}},"tool_use_id":"toolu_00000005","duration_ms":2}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read","tool_input":{"file_path":"/home/dev/src/demo/main.go"},"tool_use_id":"toolu_00000005","tool_response":"1\tpackage main\n2\t\n3\tfunc main() {\n4\t\tprintln(\"hi\")\n5\t}\n6\t"}]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/home/dev/src/demo/main.go","old_string":"hi","new_string":"hello","replace_all":false},"tool_use_id":"toolu_00000007"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/home/dev/src/demo/main.go","old_string":"hi","new_string":"hello","replace_all":false},"tool_response":{"filePath":"/home/dev/src/demo/main.go","oldString":"hi","newString":"hello","originalFile":"package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n","structuredPatch":[{"oldStart":1,"oldLines":5,"newStart":1,"newLines":5,"lines":[" package main"," "," func main() {","-  println(\"hi\")","+  println(\"hello\")"," }"]}],"userModified":false,"replaceAll":false},"tool_use_id":"toolu_00000007","duration_ms":4}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Edit","tool_input":{"replace_all":false,"file_path":"/home/dev/src/demo/main.go","old_string":"hi","new_string":"hello"},"tool_use_id":"toolu_00000007","tool_response":"The file /home/dev/src/demo/main.go has been updated successfully. (file state is current in your context — no need to Read it back)"}]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go vet ./... 2>&1; exit 3","description":"vet"},"tool_use_id":"toolu_00000009"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"go vet ./... 2>&1; exit 3","description":"vet"},"tool_use_id":"toolu_00000009","error":"Exit code 3\npattern ./...: directory prefix . does not contain main module or its selected dependencies","is_interrupt":false,"duration_ms":38}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Bash","tool_input":{"command":"go vet ./... 2>&1; exit 3","description":"vet"},"tool_use_id":"toolu_00000009","tool_response":"Exit code 3\npattern ./...: directory prefix . does not contain main module or its selected dependencies"}]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"TodoWrite","tool_input":{"todos":[{"content":"check vet","status":"in_progress","activeForm":"Checking vet"}]},"tool_use_id":"toolu_00000011","tool_response":"<tool_use_error>Error: No such tool available: TodoWrite. TodoWrite exists but is not enabled in this context. Use one of the available tools instead.</tool_use_error>"}]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"description":"scan A","prompt":"WORKER-A: count go files","subagent_type":"Explore"},"tool_use_id":"toolu_00000013"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"description":"scan B","prompt":"WORKER-B: read main.go","subagent_type":"general-purpose"},"tool_use_id":"toolu_00000014"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","agent_id":"a43b7af849cd70f20","agent_type":"Explore","hook_event_name":"SubagentStart"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","agent_id":"a0b378cebfb773646","agent_type":"general-purpose","hook_event_name":"SubagentStart"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","agent_id":"a0b378cebfb773646","agent_type":"general-purpose","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/src/demo/main.go"},"tool_use_id":"toolu_00000018"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","agent_id":"a0b378cebfb773646","agent_type":"general-purpose","effort":{"level":"high"},"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/src/demo/main.go"},"tool_response":{"type":"text","file":{"filePath":"/home/dev/src/demo/main.go","content":"package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n","numLines":6,"startLine":1,"totalLines":6}},"tool_use_id":"toolu_00000018","duration_ms":7}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","agent_id":"a43b7af849cd70f20","agent_type":"Explore","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls | wc -l","description":"count"},"tool_use_id":"toolu_00000020"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","agent_id":"a0b378cebfb773646","agent_type":"general-purpose","effort":{"level":"high"},"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read","tool_input":{"file_path":"/home/dev/src/demo/main.go"},"tool_use_id":"toolu_00000018","tool_response":"1\tpackage main\n2\t\n3\tfunc main() {\n4\t\tprintln(\"hello\")\n5\t}\n6\t"}]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","agent_id":"a43b7af849cd70f20","agent_type":"Explore","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls | wc -l","description":"count"},"tool_response":{"stdout":"2","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"tool_use_id":"toolu_00000020","duration_ms":32}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","agent_id":"a0b378cebfb773646","agent_type":"general-purpose","effort":{"level":"high"},"hook_event_name":"SubagentStop","stop_hook_active":false,"agent_transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad/subagents/agent-a0b378cebfb773646.jsonl","last_assistant_message":"main prints hello","background_tasks":[],"session_crons":[]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","agent_id":"a43b7af849cd70f20","agent_type":"Explore","hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Bash","tool_input":{"command":"ls | wc -l","description":"count"},"tool_use_id":"toolu_00000020","tool_response":"2"}]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolUse","tool_name":"Agent","tool_input":{"description":"scan B","prompt":"WORKER-B: read main.go","subagent_type":"general-purpose"},"tool_response":{"status":"completed","prompt":"WORKER-B: read main.go","agentId":"a0b378cebfb773646","agentType":"general-purpose","content":[{"type":"text","text":"main prints hello"}],"resolvedModel":"claude-opus-4-8[1m]","totalDurationMs":203,"totalTokens":15,"totalToolUseCount":1,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard"},"toolStats":{"readCount":1,"searchCount":0,"bashCount":0,"editFileCount":0,"linesAdded":0,"linesRemoved":0,"otherToolCount":0}},"tool_use_id":"toolu_00000014","duration_ms":203}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","agent_id":"a43b7af849cd70f20","agent_type":"Explore","hook_event_name":"SubagentStop","stop_hook_active":false,"agent_transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad/subagents/agent-a43b7af849cd70f20.jsonl","last_assistant_message":"1 go file","background_tasks":[],"session_crons":[]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolUse","tool_name":"Agent","tool_input":{"description":"scan A","prompt":"WORKER-A: count go files","subagent_type":"Explore"},"tool_response":{"status":"completed","prompt":"WORKER-A: count go files","agentId":"a43b7af849cd70f20","agentType":"Explore","content":[{"type":"text","text":"1 go file"}],"resolvedModel":"claude-haiku-4-5-20251001","totalDurationMs":263,"totalTokens":15,"totalToolUseCount":2,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard"},"toolStats":{"readCount":0,"searchCount":1,"bashCount":1,"editFileCount":0,"linesAdded":0,"linesRemoved":0,"otherToolCount":0}},"tool_use_id":"toolu_00000013","duration_ms":263}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Agent","tool_input":{"description":"scan A","prompt":"WORKER-A: count go files","subagent_type":"Explore"},"tool_use_id":"toolu_00000013","tool_response":[{"type":"text","text":"1 go file"}]},{"tool_name":"Agent","tool_input":{"description":"scan B","prompt":"WORKER-B: read main.go","subagent_type":"general-purpose"},"tool_use_id":"toolu_00000014","tool_response":[{"type":"text","text":"main prints hello"},{"type":"text","text":"agentId: a0b378cebfb773646 (use SendMessage with to: 'a0b378cebfb773646', summary: '<5-10 word recap>' to continue this agent)\n<usage>subagent_tokens: 15\ntool_uses: 1\nduration_ms: 203</usage>"}]}]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/home/dev/src/demo/NOTES.md","content":"done\n"},"tool_use_id":"toolu_00000024"}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"/home/dev/src/demo/NOTES.md","content":"done\n"},"tool_response":{"type":"create","filePath":"/home/dev/src/demo/NOTES.md","content":"done\n","structuredPatch":[],"originalFile":null,"userModified":false},"tool_use_id":"toolu_00000024","duration_ms":4}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Write","tool_input":{"file_path":"/home/dev/src/demo/NOTES.md","content":"done\n"},"tool_use_id":"toolu_00000024","tool_response":"File created successfully at: /home/dev/src/demo/NOTES.md (file state is current in your context — no need to Read it back)"}]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"All finished.","background_tasks":[],"session_crons":[]}
{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","hook_event_name":"SessionEnd","reason":"other"}
{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","transcript_path":"/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T15-37-57-01a1fec1-d268-7292-b394-c2a0ea7d215e.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"SessionStart","model":"gpt-5.5","permission_mode":"bypassPermissions","source":"startup"}
{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","turn_id":"01a1fec1-d28b-7812-8090-971da9f43dc1","transcript_path":"/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T15-37-57-01a1fec1-d268-7292-b394-c2a0ea7d215e.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"UserPromptSubmit","model":"gpt-5.5","permission_mode":"bypassPermissions","prompt":"Create hi.txt and notes.md, then delegate counting files to a subagent."}
{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","turn_id":"01a1fec1-d28b-7812-8090-971da9f43dc1","transcript_path":"/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T15-37-57-01a1fec1-d268-7292-b394-c2a0ea7d215e.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"echo hello > hi.txt && ls"},"tool_use_id":"call_000004"}
{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","turn_id":"01a1fec1-d28b-7812-8090-971da9f43dc1","transcript_path":"/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T15-37-57-01a1fec1-d268-7292-b394-c2a0ea7d215e.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"PostToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"echo hello > hi.txt && ls"},"tool_response":"hi.txt\n","tool_use_id":"call_000004"}
{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","turn_id":"01a1fec1-d28b-7812-8090-971da9f43dc1","transcript_path":"/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T15-37-57-01a1fec1-d268-7292-b394-c2a0ea7d215e.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: notes.md\n+# Notes\n+first line\n*** End Patch\n"},"tool_use_id":"call_000007"}
{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","turn_id":"01a1fec1-d28b-7812-8090-971da9f43dc1","transcript_path":"/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T15-37-57-01a1fec1-d268-7292-b394-c2a0ea7d215e.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"PostToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: notes.md\n+# Notes\n+first line\n*** End Patch\n"},"tool_response":"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA notes.md\n","tool_use_id":"call_000007"}
{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","turn_id":"01a1fec1-d28b-7812-8090-971da9f43dc1","transcript_path":"/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T15-37-57-01a1fec1-d268-7292-b394-c2a0ea7d215e.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"cat missing-file.txt; exit 3"},"tool_use_id":"call_000010"}
{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","turn_id":"01a1fec1-d28b-7812-8090-971da9f43dc1","transcript_path":"/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T15-37-57-01a1fec1-d268-7292-b394-c2a0ea7d215e.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"PostToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"cat missing-file.txt; exit 3"},"tool_response":"cat: missing-file.txt: No such file or directory\n","tool_use_id":"call_000010"}
{"session_id":"01a1fec1-d268-7292-b394-c2a0ea7d215e","turn_id":"01a1fec1-d28b-7812-8090-971da9f43dc1","transcript_path":"/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T15-37-57-01a1fec1-d268-7292-b394-c2a0ea7d215e.jsonl","cwd":"/home/dev/src/demo","hook_event_name":"Stop","model":"gpt-5.5","permission_mode":"bypassPermissions","stop_hook_active":false,"last_assistant_message":"All done: hi.txt and notes.md created."}`

// SamplePayloads returns the built-in payloads the benchmarks send.
func SamplePayloads() [][]byte {
	var out [][]byte
	for _, line := range strings.Split(samplePayloads, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, []byte(line))
		}
	}
	return out
}

// IngestOptions configures Ingest. Zero values take the defaults.
type IngestOptions struct {
	// Dir holds the database; "" is a temporary directory removed after.
	Dir string
	// Events is the number of envelopes sent (default 200,000).
	Events int
	// BatchSize is the number of envelopes per request (default 500).
	BatchSize int
	// Clients is the number of concurrent HTTP clients (default 4).
	Clients int
	// Payloads are the payload objects to cycle through (default
	// SamplePayloads). Their session_id is rewritten so that each client
	// plays its own sessions.
	Payloads [][]byte
	// WaitModel waits, after the last reply, until the session model has
	// applied every event, and reports what its rounds took.
	WaitModel bool
	// NoAgentMetrics turns the metrics per agent off
	// (collector.Config.NoAgentMetrics).
	NoAgentMetrics bool
	// Quiet prints nothing.
	Quiet bool
	// AuditDir, when not empty, is the collector's continuous audit
	// directory (serve --audit-dir).
	AuditDir string
	// ModelSinks receive the model's changes (collector.Config.ModelSinks):
	// the OTLP push, to measure what it costs.
	ModelSinks []collector.ModelSink
	// StoreSinks, when set, returns more ModelSinks built on the
	// collector's store once it is open: the OTLP push with the store's
	// rows and debts, as serve wires it. The collector stops them before
	// it closes the store.
	StoreSinks func(db *sqlite.DB) []collector.ModelSink
}

// IngestResult is what Ingest measured.
type IngestResult struct {
	Events   int
	Requests int
	// Duration runs from the first request sent to the last reply.
	Duration     time.Duration
	EventsPerSec float64
	// BodyBytes is the total size of the request bodies.
	BodyBytes int64
	// RequestMedian and RequestP95 are the latencies of one request.
	RequestMedian, RequestP95 time.Duration
	// DBBytes is the size of the database files afterwards.
	DBBytes int64
	// With WaitModel: Modelled runs from the first request sent to the
	// last event applied to the model; ModelRounds and ModelRoundTime are
	// the model's rounds and the time they took in all.
	Modelled       time.Duration
	ModelRounds    int
	ModelRoundTime time.Duration
	// CPU is the process's CPU time (collector and clients) from the first
	// request sent to the last reply; with WaitModel, ModelledCPU is the
	// same to the last event applied.
	CPU, ModelledCPU time.Duration
	// With WaitModel: Spilled is how many events the model left in the
	// log as they were committed, to read back (its backlog at its bound).
	Spilled int
	// With an AuditDir: the event lines the trail got and lost, and how
	// long after the last reply it had every event.
	AuditLines, AuditLost int64
	AuditLag              time.Duration
}

// Ingest measures events per second through POST /v1/events: a collector on
// loopback, on a SQLite database on disk, fed batches of realistic envelopes
// by concurrent clients. Request bodies are prepared before the clock starts
// (only ids and session ids are patched per request), so the figure is the
// collector's, not the client's. It prints one summary line to w.
func Ingest(ctx context.Context, w io.Writer, o IngestOptions) (IngestResult, error) {
	if o.Events <= 0 {
		o.Events = 200_000
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.Clients <= 0 {
		o.Clients = 4
	}
	if len(o.Payloads) == 0 {
		o.Payloads = SamplePayloads()
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hookwatch-bench-ingest-")
		if err != nil {
			return IngestResult{}, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	dbPath := filepath.Join(dir, "ingest.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(dbPath + suffix) // every run starts from an empty database
	}
	db, err := sqlite.Open(dbPath)
	if err != nil {
		return IngestResult{}, err
	}
	sinks := o.ModelSinks
	if o.StoreSinks != nil {
		sinks = append(append([]collector.ModelSink(nil), sinks...), o.StoreSinks(db)...)
	}
	srv, err := collector.New(collector.Config{Store: db, Version: "bench", NoAgentMetrics: o.NoAgentMetrics, AuditDir: o.AuditDir, ModelSinks: sinks})
	if err != nil {
		db.Close()
		return IngestResult{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Shutdown(ctx)
		return IngestResult{}, err
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	url := "http://" + ln.Addr().String() + "/v1/events"

	templates, err := makeTemplates(o.Payloads, o.BatchSize, 4)
	if err != nil {
		return IngestResult{}, err
	}
	requests := (o.Events + o.BatchSize - 1) / o.BatchSize
	transport := &http.Transport{MaxIdleConnsPerHost: o.Clients, DisableCompression: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 2 * time.Minute}

	var (
		next      atomic.Int64
		bodyBytes atomic.Int64
		mu        sync.Mutex
		latencies []time.Duration
		firstErr  error
		wg        sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		next.Store(int64(requests)) // stop every client
	}
	cpu0, err := processCPU()
	if err != nil {
		return IngestResult{}, err
	}
	start := time.Now()
	for c := range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				r := int(next.Add(1)) - 1
				if r >= requests || ctx.Err() != nil {
					return
				}
				n := min(o.BatchSize, o.Events-r*o.BatchSize)
				buf = templates[r%len(templates)].fill(buf, n, c, r*o.BatchSize)
				bodyBytes.Add(int64(len(buf)))
				t0 := time.Now()
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(buf))
				if err != nil {
					fail(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					fail(fmt.Errorf("cannot post a batch: %w", err))
					return
				}
				var ir collector.IngestResult
				derr := json.NewDecoder(res.Body).Decode(&ir)
				res.Body.Close()
				if res.StatusCode != http.StatusOK || derr != nil || ir.Accepted != n {
					fail(fmt.Errorf("batch %d: status %d, %+v, %v", r, res.StatusCode, ir, derr))
					return
				}
				d := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, err := processCPU()
	if err != nil {
		return IngestResult{}, err
	}
	if firstErr != nil {
		return IngestResult{}, firstErr
	}
	if err := ctx.Err(); err != nil {
		return IngestResult{}, err
	}
	var model IngestResult
	var audited, lost int64
	var lag time.Duration
	if o.AuditDir != "" {
		var err error
		if audited, lost, lag, err = awaitTrail(ctx, client, "http://"+ln.Addr().String()+"/metrics", int64(o.Events)); err != nil {
			return IngestResult{}, err
		}
	}
	if o.WaitModel {
		var err error
		if model, err = waitModel(ctx, client, "http://"+ln.Addr().String()+"/metrics", o.Events, start); err != nil {
			return IngestResult{}, err
		}
		cpu2, err := processCPU()
		if err != nil {
			return IngestResult{}, err
		}
		model.ModelledCPU = cpu2 - cpu0
	}
	if err := srv.Shutdown(ctx); err != nil {
		return IngestResult{}, err
	}
	res := IngestResult{
		Modelled: model.Modelled, ModelRounds: model.ModelRounds, ModelRoundTime: model.ModelRoundTime,
		ModelledCPU: model.ModelledCPU, Spilled: model.Spilled, CPU: cpu1 - cpu0,
		AuditLines: audited, AuditLost: lost, AuditLag: lag,
		Events:        o.Events,
		Requests:      requests,
		Duration:      elapsed,
		EventsPerSec:  float64(o.Events) / elapsed.Seconds(),
		BodyBytes:     bodyBytes.Load(),
		RequestMedian: quantile(latencies, 0.5),
		RequestP95:    quantile(latencies, 0.95),
		DBBytes:       fileSizes(dbPath, dbPath+"-wal", dbPath+"-shm"),
	}
	if o.Quiet {
		return res, nil
	}
	perEvent := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(res.Events) }
	fmt.Fprintf(w, "ingest: %d events in %d requests of %d from %d clients in %v: %.0f events/s (%.1f MB/s of JSON); request median %v, p95 %v; process CPU %.1f µs per event (clients included); database %.1f MB\n",
		res.Events, res.Requests, o.BatchSize, o.Clients, res.Duration.Round(time.Millisecond), res.EventsPerSec,
		float64(res.BodyBytes)/elapsed.Seconds()/1e6, res.RequestMedian.Round(time.Microsecond), res.RequestP95.Round(time.Microsecond),
		perEvent(res.CPU), float64(res.DBBytes)/1e6)
	if o.WaitModel {
		fmt.Fprintf(w, "  model: every event applied %v after the first request (%v after the last reply), in %d rounds of %v in all; %d events left in the log at their commit and read back; process CPU %.1f µs per event to there\n",
			res.Modelled.Round(time.Millisecond), (res.Modelled - res.Duration).Round(time.Millisecond), res.ModelRounds,
			res.ModelRoundTime.Round(time.Millisecond), res.Spilled, perEvent(res.ModelledCPU))
	}
	if o.AuditDir != "" {
		fmt.Fprintf(w, "  audit trail: %d event lines, %d lost; complete %v after the last reply\n", res.AuditLines, res.AuditLost, res.AuditLag.Round(time.Millisecond))
	}
	return res, nil
}

// waitModel polls the collector's metrics until its model applied events
// events, and returns the model figures of an IngestResult.
func waitModel(ctx context.Context, c *http.Client, url string, events int, start time.Time) (IngestResult, error) {
	for {
		m, err := scrape(c, url)
		if err != nil {
			return IngestResult{}, err
		}
		if int(m["hookwatch_model_events_applied_total"]) >= events && m["hookwatch_model_pending_events"] == 0 {
			return IngestResult{
				Modelled:       time.Since(start),
				ModelRounds:    int(m["hookwatch_model_round_duration_seconds_count"]),
				ModelRoundTime: time.Duration(m["hookwatch_model_round_duration_seconds_sum"] * float64(time.Second)),
				Spilled:        int(m["hookwatch_model_events_spilled_total"]),
			}, nil
		}
		if time.Since(start) > 10*time.Minute {
			return IngestResult{}, fmt.Errorf("the model applied %v of %d events after 10 minutes", m["hookwatch_model_events_applied_total"], events)
		}
		select {
		case <-ctx.Done():
			return IngestResult{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// awaitTrail waits until the collector's audit trail has every one of
// want events (written or counted lost), and returns how long that took.
func awaitTrail(ctx context.Context, c *http.Client, metricsURL string, want int64) (written, lost int64, lag time.Duration, err error) {
	start := time.Now()
	for {
		m, err := scrape(c, metricsURL)
		if err != nil {
			return 0, 0, 0, err
		}
		written = int64(m[`hookwatch_audit_lines_written_total{file="events"}`])
		lost = int64(m[`hookwatch_audit_lines_lost_total{reason="queue_full"}`] + m[`hookwatch_audit_lines_lost_total{reason="write_error"}`])
		if written+lost >= want {
			return written, lost, time.Since(start), nil
		}
		if time.Since(start) > 5*time.Minute {
			return 0, 0, 0, fmt.Errorf("the audit trail has %d of %d events after 5 minutes", written+lost, want)
		}
		select {
		case <-ctx.Done():
			return 0, 0, 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func fileSizes(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// sessionPlaceholder stands for the session id in a template; the ids
// patched over it have the same width.
const sessionPlaceholder = "bench-00-000000000000000"

// eventsPerSession is how many events of one client go to one session
// before it starts the next.
const eventsPerSession = 400

// template is a request body prepared once: envelopes whose ids and session
// ids are overwritten in place for each request.
type template struct {
	body   []byte
	ends   []int // end offset of each envelope in body
	idAt   []int // offset of each envelope's 36-byte id
	sessAt []int // offset of each envelope's session id, -1 when none
}

// makeTemplates prepares count bodies of size envelopes each, cycling
// through payloads.
func makeTemplates(payloads [][]byte, size, count int) ([]*template, error) {
	now := time.Now().UTC()
	var out []*template
	k := 0
	for range count {
		t := &template{}
		t.body = append(t.body, `{"envelopes":[`...)
		for i := range size {
			raw := payloads[k%len(payloads)]
			k++
			p, err := event.Decode(raw)
			if err != nil {
				return nil, fmt.Errorf("cannot use payload %.60q: %w", raw, err)
			}
			p.Raw["session_id"] = json.RawMessage(`"` + sessionPlaceholder + `"`)
			payload, err := json.Marshal(p)
			if err != nil {
				return nil, err
			}
			env := event.Envelope{
				ID:               event.NewID(now),
				Runtime:          event.RuntimeClaudeCode,
				Kind:             event.KindHook,
				ReceivedAt:       now.Add(time.Duration(i) * time.Microsecond),
				Host:             "bench-host",
				User:             "bench",
				HookwatchVersion: "bench",
				Payload:          payload,
			}
			if _, ok := p.Raw["turn_id"]; ok {
				env.Runtime = event.RuntimeCodex
			}
			b, err := json.Marshal(env)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				t.body = append(t.body, ',')
			}
			off := len(t.body)
			if !bytes.HasPrefix(b, []byte(`{"id":"`)) {
				return nil, errors.New("the envelope does not start with its id")
			}
			t.idAt = append(t.idAt, off+len(`{"id":"`))
			s := bytes.Index(b, []byte(sessionPlaceholder))
			if s >= 0 {
				s += off
			}
			t.sessAt = append(t.sessAt, s)
			t.body = append(t.body, b...)
			t.ends = append(t.ends, len(t.body))
		}
		t.body = append(t.body, "]}"...)
		out = append(out, t)
	}
	return out, nil
}

// fill writes into buf the template's first n envelopes with fresh ids and
// the session ids of client c, whose events are numbered from first on.
func (t *template) fill(buf []byte, n, c, first int) []byte {
	buf = append(buf[:0], t.body[:t.ends[n-1]]...)
	buf = append(buf, "]}"...)
	now := time.Now()
	for i := range n {
		copy(buf[t.idAt[i]:], event.NewID(now))
		if at := t.sessAt[i]; at >= 0 {
			copy(buf[at:], fmt.Sprintf("bench-%02d-%015d", c%100, (first+i)/eventsPerSession))
		}
	}
	return buf
}
