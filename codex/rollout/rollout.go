// Package rollout reads Codex's rollout files (its transcripts:
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl) into envelopes of kind
// event.KindRollout, for `hookwatch import --codex`: what the rollout
// records, each as the payload Codex's hooks would have sent for it (same
// tool names and inputs), so that the session model merges them with the
// hook events — a call by tool_use_id (Codex's call_id), a prompt by its
// turn — and counts each once, whichever way it arrived. The rollout adds
// what hooks lack: the exit code of a command, the outcome of a call no
// PostToolUse reported, calls that fired no hook (made while no hook was
// installed), and, for a session no hook saw, its prompts and its end.
//
// What Codex 0.169 writes of a call, and what it is read as:
//
//   - a command: its item_completed (exit code) and then its output: a
//     PostToolUse with the exit code;
//   - a command interrupted (Ctrl-C, turn/interrupt): its output "aborted
//     by user", the turn's turn_aborted, then its item_completed (exit
//     code -1). No hook reports it; it is read, at the turn_aborted, as a
//     PostToolUseFailure with is_interrupt, as Claude Code reports an
//     interrupted call. So is every call of that turn still without a
//     result, output or not;
//   - a command that yielded (still running when yield_time_ms passed):
//     its output "Process running with session ID …" is not its end; its
//     item_completed is, whenever the process ends (exit code -1 when
//     Codex killed it): a PostToolUse with that exit code, then;
//   - a patch: its item_completed (a FileChange, status completed or
//     failed), then its output; a patch Codex refused before applying it
//     ("apply_patch verification failed: …") has no item at all. A patch
//     whose item is not completed is a PostToolUseFailure with the output
//     as its error;
//   - a call a PreToolUse hook denied: the output "Command blocked by
//     PreToolUse hook: …", read as a PermissionDenied with the reason;
//   - a call still running when the file ends: its PreToolUse alone.
//
// A user's prompt (item_completed of a UserMessage) is a UserPromptSubmit
// with the turn's model; the end of a `codex exec` turn (task_complete or
// turn_aborted of a thread whose source is exec: the process exits with
// it) is a SessionEnd, as exec's hook reports it; a fork's session_meta
// (forked_from_id) is its SessionStart with source fork, naming the
// session it was forked from in Envelope.ForkOf, as the fork's hook does.
//
// It is not linked into the hook.
package rollout

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/lines"
	"github.com/hookwatch/hookwatch/internal/regfile"
)

// MaxLine bounds one rollout record; a longer line is passed over, and
// counted (Stats.Long). It bounds the memory a hostile file can make the
// reader hold.
const MaxLine = 32 << 20

// Stats counts the lines of a rollout that were lost to a read: Long,
// above MaxLine (a huge command output), and Unreadable, not JSON or not
// a record of the shape read (a torn line a crash left, a field of
// another type). What they held is missing from the envelopes, which an
// import says; a record of a type no envelope comes of, and a blank line,
// are not counted: nothing of use is lost with them.
type Stats struct {
	Long, Unreadable int
}

// tokens is a token_count record's usage (the Responses API's).
type tokens struct {
	Input       int64 `json:"input_tokens"`
	CachedInput int64 `json:"cached_input_tokens"`
	CacheWrite  int64 `json:"cache_write_input_tokens"`
	Output      int64 `json:"output_tokens"`
	Total       int64 `json:"total_tokens"`
}

type item struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Arguments string `json:"arguments"`
	Input     string `json:"input"`
	CallID    string `json:"call_id"`
	Output    any    `json:"output"`
	// web_search_call
	Status string          `json:"status"`
	Action json.RawMessage `json:"action"`
	Meta   struct {
		TurnID string `json:"turn_id"`
	} `json:"internal_chat_message_metadata_passthrough"`
	TurnID string `json:"turn_id"`
	// token_count: the session's running total and the last response's.
	Info *struct {
		Total *tokens `json:"total_token_usage"`
		Last  *tokens `json:"last_token_usage"`
	} `json:"info"`
	// turn_context
	Model string `json:"model"`
	// web_search_call
	ID string `json:"id"`
	// item_completed: the item (its exit code is read by codex.CommandEnd)
	Item struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Status  string `json:"status"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"item"`
	// turn_aborted
	Reason string `json:"reason"`
	// task_complete
	LastAgentMessage string `json:"last_agent_message"`
}

// call is one tool call whose result has not been read yet.
type call struct {
	id, name, turn string
	input          json.RawMessage
	seq            int // the order of the calls, for the results one record ends
	exit           *int
	// command: an exec_command, whose end is its item_completed.
	command bool
	// output is the command's output, read before its end (held: it
	// yielded, or was interrupted); nil before.
	output any
	// patch is the status of the patch's FileChange item; "" before.
	patch string
}

// maxPending bounds the calls a Reader keeps waiting for their results:
// a call past it is reported without its result.
const maxPending = 4096

// Reader reads one rollout file, record after record, into envelopes: a
// call's PreToolUse when the call is recorded, its PostToolUse (or the
// denial) when its result is. It keeps only the session's identity and
// the calls still waiting for their results, so that a file can be read
// in pieces as Codex appends to it (the collector's tail) or at once
// (Read), with the same envelopes either way.
type Reader struct {
	path, host, user     string
	thread, session, cwd string
	pending              map[string]*call
	seq                  int
	// exec: the thread is a `codex exec` run's, which ends with its turn.
	exec bool
	// turn and model are the latest a record named; total the session's
	// token total at the last token_count record.
	turn, model string
	total       tokens
	// sum is what the rollout says of its thread as a whole (Summary).
	sum Summary
	// lost counts the lines Record could not read, and read's long ones.
	lost Stats
}

// Summary is what a rollout says of its thread as a whole, as far as it
// was read: what a listing of sessions shows (`hookwatch sessions
// --codex`). A session's own rollout has Thread == Session; a subagent's
// has its own thread, its root's session and the thread that spawned it.
type Summary struct {
	// Path is the rollout's absolute path.
	Path            string
	Thread, Session string
	// Parent is the thread that spawned a subagent's thread; "" for a
	// session's own.
	Parent string
	// Nickname is the name Codex shows for a subagent's thread
	// ("Maxwell"); "" for a session's own.
	Nickname string
	// ForkedFrom is the session a fork was made of; "" for a thread that
	// is not a fork.
	ForkedFrom string
	// CWD is the directory the thread runs in (session_meta's).
	CWD string
	// Source is what started the thread as Codex names it ("cli", "exec",
	// "vscode", …), or "subagent".
	Source string
	// Model is the latest turn's model.
	Model string
	// FirstPrompt is the user's first prompt, whole; Prompts counts them.
	FirstPrompt string
	Prompts     int
	// LastAnswer is the thread's latest answer, whole.
	LastAnswer string
	// Started is the time of the session_meta record; LastActivity that
	// of the latest record.
	Started, LastActivity time.Time
}

// Summary returns what the records read so far say of the thread; its
// Thread is "" until the session_meta record was read.
func (r *Reader) Summary() Summary {
	s := r.sum
	s.Path, s.Thread, s.Session, s.CWD, s.Model = r.path, r.thread, r.session, r.cwd, r.model
	return s
}

// sourceSubagent is Summary.Source of a subagent's thread, whose
// session_meta source is an object ({"subagent":{"thread_spawn":{…}}}).
const sourceSubagent = "subagent"

// source reads session_meta's source: a name, or an object naming a
// subagent's spawn (its parent thread and nickname, when the record has
// none beside).
func source(raw json.RawMessage) (name, parent, nickname string) {
	if json.Unmarshal(raw, &name) == nil {
		return name, "", ""
	}
	var o struct {
		Subagent *struct {
			ThreadSpawn struct {
				Parent   string `json:"parent_thread_id"`
				Nickname string `json:"agent_nickname"`
			} `json:"thread_spawn"`
		} `json:"subagent"`
	}
	if json.Unmarshal(raw, &o) != nil || o.Subagent == nil {
		return "", "", ""
	}
	return sourceSubagent, o.Subagent.ThreadSpawn.Parent, o.Subagent.ThreadSpawn.Nickname
}

// NewReader returns a Reader for the rollout at path; host and user are
// its envelopes'.
func NewReader(path, host, user string) *Reader {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return &Reader{path: abs, host: host, user: user, pending: map[string]*call{}}
}

// Session returns the session the rollout belongs to; "" until its
// session_meta record was read.
func (r *Reader) Session() string { return r.session }

// Lost returns the lines lost so far: those Record could not read and,
// for Read's and a Tail's Reader, the lines above MaxLine passed over.
func (r *Reader) Lost() Stats { return r.lost }

// Record reads one line of the rollout and returns the envelopes it
// completes (Runtime codex, Kind rollout, ReceivedAt the record's time).
// Ids are derived from the thread and call ids, so that reading a record
// again adds nothing to a store. A line that is not a record, or comes
// before the session_meta record, gives nothing; one that is not JSON or
// not of a record's shape is counted (Lost).
func (r *Reader) Record(line []byte) []event.Envelope {
	rec, ok := codex.DecodeRecord(line)
	if !ok {
		if len(bytes.TrimSpace(line)) > 0 {
			r.lost.Unreadable++
		}
		return nil
	}
	var it item
	var meta codex.Meta
	if rec.Type == codex.RecordSessionMeta {
		meta, ok = codex.DecodeMeta(rec.Payload)
	} else {
		ok = json.Unmarshal(rec.Payload, &it) == nil
	}
	if !ok {
		r.lost.Unreadable++
		return nil
	}
	if t := cmp.Or(it.TurnID, it.Meta.TurnID); t != "" {
		r.turn = t
	}
	if (r.session != "" || rec.Type == codex.RecordSessionMeta) && rec.Timestamp.After(r.sum.LastActivity) {
		r.sum.LastActivity = rec.Timestamp
	}
	switch {
	case rec.Type == codex.RecordSessionMeta:
		if r.thread == "" {
			r.thread, r.session, r.cwd = meta.ID, meta.SessionID, meta.CWD
			if r.session == "" {
				r.session = r.thread
			}
			var parent, nickname string
			r.sum.Source, parent, nickname = source(meta.Source)
			r.sum.Parent = cmp.Or(meta.Parent, parent)
			r.sum.Nickname = cmp.Or(meta.Nickname, nickname)
			r.sum.ForkedFrom = meta.ForkedFrom
			r.sum.Started = rec.Timestamp
			r.exec = r.sum.Source == "exec"
			return r.forkStart(rec)
		}
	case r.session == "":
	case rec.Type == "turn_context":
		if it.Model != "" {
			r.model = it.Model
		}
		if it.TurnID != "" {
			r.turn = it.TurnID
		}
	case rec.Type == "event_msg" && it.Type == "token_count":
		return r.usage(rec, it)
	case rec.Type == "response_item" && it.Type == "web_search_call" && it.ID != "":
		return r.webSearch(rec, it)
	case rec.Type == "response_item" && (it.Type == "function_call" || it.Type == "custom_tool_call") && it.CallID != "":
		if r.pending[it.CallID] != nil {
			return nil
		}
		name, input := hookView(it)
		r.seq++
		c := &call{id: it.CallID, name: name, input: input, turn: it.Meta.TurnID, seq: r.seq,
			command: it.Type == "function_call" && it.Name == "exec_command"}
		if len(r.pending) < maxPending {
			r.pending[c.id] = c
		}
		return []event.Envelope{r.envelope(r.payload(c), event.PreToolUse, c.id, rec.Timestamp, nil)}
	case rec.Type == "response_item" && (it.Type == "function_call_output" || it.Type == "custom_tool_call_output"):
		c := r.pending[it.CallID]
		if c == nil {
			return nil
		}
		if why, ok := blocked(it.Output); ok {
			// No tool_response for a call a hook denied: the client's
			// refusal, as Claude Code reports one.
			delete(r.pending, c.id)
			p := r.payload(c)
			p["reason"] = why
			return []event.Envelope{r.envelope(p, event.PermissionDenied, c.id, rec.Timestamp, nil)}
		}
		if c.command && c.exit == nil {
			// A command's end is written before its output; an output
			// before it is of a command still running (it yielded) or
			// interrupted: its item_completed, or the turn's
			// turn_aborted, says how it ended.
			c.output = it.Output
			if c.output == nil {
				c.output = ""
			}
			return nil
		}
		delete(r.pending, c.id)
		if c.name == patchTool && c.patch != itemCompleted {
			// Codex records a FileChange item for every patch it
			// applies; one refused before (its verification failed)
			// has none, only the error it answers the model with.
			return []event.Envelope{r.failure(c, rec.Timestamp, outputText(it.Output), false)}
		}
		return []event.Envelope{r.post(c, it.Output, rec.Timestamp)}
	case rec.Type == "event_msg" && it.Type == "item_completed":
		return r.itemCompleted(rec, it, line)
	case rec.Type == "event_msg" && it.Type == "turn_aborted":
		return r.turnEnded(rec, it.TurnID, it.Reason)
	case rec.Type == "event_msg" && it.Type == "task_complete":
		if it.LastAgentMessage != "" {
			r.sum.LastAnswer = it.LastAgentMessage
		}
		return r.turnEnded(rec, it.TurnID, "")
	}
	return nil
}

// forkStart returns, for a fork's own thread (its session_meta names the
// session it was forked from: thread/fork, codex fork), the SessionStart
// its hook sends (source fork), with that session as the hook reads it
// from the same record (Envelope.ForkOf, codex.ForkParent): what links a
// fork no hook saw to its parent, as its hook's links it. Nothing for
// another thread, nor for a subagent's, which no SessionStart reports.
func (r *Reader) forkStart(rec codex.Record) []event.Envelope {
	from := r.sum.ForkedFrom
	if from == "" || from == r.thread || r.thread != r.session {
		return nil
	}
	p := r.common("")
	p["source"] = "fork"
	env := r.envelope(p, event.SessionStart, "fork", rec.Timestamp, nil)
	env.ForkOf = from
	return []event.Envelope{env}
}

// patchTool is the tool that edits files; itemCompleted the status of an
// item that ended well.
const (
	patchTool     = "apply_patch"
	itemCompleted = "completed"
)

// itemCompleted reads an item_completed record: a command's end (its exit
// code; the call's result when its output came first), a patch's status,
// a user's prompt.
func (r *Reader) itemCompleted(rec codex.Record, it item, line []byte) []event.Envelope {
	if id, code, ok := codex.CommandEnd(line); ok {
		c := r.pending[id]
		switch {
		case c == nil:
		case c.output != nil:
			delete(r.pending, c.id)
			c.exit = &code
			return []event.Envelope{r.post(c, c.output, rec.Timestamp)}
		default:
			c.exit = &code
		}
		return nil
	}
	switch it.Item.Type {
	case "FileChange":
		if c := r.pending[it.Item.ID]; c != nil {
			c.patch = it.Item.Status
		}
	case "AgentMessage":
		if parts := itemText(it); len(parts) > 0 {
			r.sum.LastAnswer = strings.Join(parts, "\n")
		}
	case "UserMessage":
		parts := itemText(it)
		if len(parts) == 0 || it.Item.ID == "" {
			return nil
		}
		text := strings.Join(parts, "\n")
		if r.sum.Prompts++; r.sum.FirstPrompt == "" {
			r.sum.FirstPrompt = text
		}
		p := r.common(it.TurnID)
		p["prompt"] = text
		if r.model != "" {
			p["model"] = r.model
		}
		return []event.Envelope{r.envelope(p, event.UserPromptSubmit, it.Item.ID, rec.Timestamp, nil)}
	}
	return nil
}

// itemText returns the text parts of an item_completed's message: a
// UserMessage's are "text", an AgentMessage's "Text".
func itemText(it item) []string {
	var parts []string
	for _, p := range it.Item.Content {
		if strings.EqualFold(p.Type, "text") {
			parts = append(parts, p.Text)
		}
	}
	return parts
}

// turnEnded reads the end of a turn (turn_aborted with its reason, or
// task_complete): an aborted turn's calls without a result were
// interrupted — all but commands that yielded, still running; and a
// `codex exec` process ends with its turn. A call whose output came but
// not its end when the turn completed (a Codex that records none) has that
// output as its result.
func (r *Reader) turnEnded(rec codex.Record, turn, aborted string) []event.Envelope {
	var ended []*call
	for _, c := range r.pending {
		if (turn == "" || c.turn == turn) && (aborted != "" || c.output != nil) && !running(c.output) {
			ended = append(ended, c)
		}
	}
	slices.SortFunc(ended, func(x, y *call) int { return x.seq - y.seq })
	var envs []event.Envelope
	for _, c := range ended {
		delete(r.pending, c.id)
		if aborted == "" {
			envs = append(envs, r.post(c, c.output, rec.Timestamp))
			continue
		}
		why := outputText(c.output)
		if why == "" {
			why = "turn " + aborted
		}
		envs = append(envs, r.failure(c, rec.Timestamp, why, true))
	}
	if r.exec && r.thread == r.session {
		// As exec's SessionEnd hook says it: no turn, reason other.
		p := r.common("")
		p["reason"] = "other"
		envs = append(envs, r.envelope(p, event.SessionEnd, "end-"+turn, rec.Timestamp, nil))
	}
	return envs
}

// post returns the PostToolUse of a call that ended with output.
func (r *Reader) post(c *call, output any, at time.Time) event.Envelope {
	p := r.payload(c)
	p["tool_response"] = output
	return r.envelope(p, event.PostToolUse, c.id, at, c.exit)
}

// failure returns the PostToolUseFailure of a call that failed or, with
// interrupt, was interrupted.
func (r *Reader) failure(c *call, at time.Time, why string, interrupt bool) event.Envelope {
	p := r.payload(c)
	p["error"] = why
	if interrupt {
		p["is_interrupt"] = true
	}
	return r.envelope(p, event.PostToolUseFailure, c.id, at, c.exit)
}

// runningPrefix is what the output of a command that yielded while
// running says: "Process running with session ID <n>".
const runningPrefix = "Process running with session ID "

// running reports whether a command's output says it is still running.
func running(output any) bool {
	s, _ := output.(string)
	return strings.HasPrefix(s, runningPrefix) || strings.Contains(s, "\n"+runningPrefix)
}

// outputText returns a call's output as text: the string, else its JSON.
func outputText(output any) string {
	switch o := output.(type) {
	case nil:
		return ""
	case string:
		return o
	}
	b, _ := json.Marshal(output)
	return string(b)
}

// UsageEvent is the name of the envelopes that carry a model response's
// token usage, read from a rollout's token_count records: the name
// hookwatch gives a transcript's usage record, with its payload's shape
// ("message_id", "usage" in the Anthropic Messages API's terms), so that
// the session model sums Codex's tokens where it sums Claude Code's.
const UsageEvent = "TranscriptUsage"

// WebSearchTool is the tool name of a web search the model ran (Codex's
// hosted web_search tool), which fires no hook: the rollout is all there
// is of it.
const WebSearchTool = "web_search"

// webSearch returns a web search's call: its PreToolUse, and its
// PostToolUse at the same time once completed (the rollout records the
// search done, not its start); the input is the search's action
// ({"type":"search","query":…}).
func (r *Reader) webSearch(rec codex.Record, it item) []event.Envelope {
	in := it.Action
	if !json.Valid(in) {
		in = json.RawMessage("{}")
	}
	c := &call{id: it.ID, name: WebSearchTool, input: in, turn: it.Meta.TurnID}
	envs := []event.Envelope{r.envelope(r.payload(c), event.PreToolUse, c.id, rec.Timestamp, nil)}
	if it.Status == "completed" {
		p := r.payload(c)
		p["tool_response"] = map[string]string{"status": it.Status}
		envs = append(envs, r.envelope(p, event.PostToolUse, c.id, rec.Timestamp, nil))
	}
	return envs
}

// IsUsage reports whether env, read by a Reader, carries token usage
// (UsageEvent) rather than a tool call.
func IsUsage(env event.Envelope) bool { return strings.HasSuffix(env.ID, ":"+UsageEvent) }

// usage returns the envelope of a token_count record that reports a new
// response: its last_token_usage, when the running total moved (Codex
// repeats the record, unchanged, on rate-limit updates). The Responses
// API counts cached input inside input_tokens; the envelope, as Claude
// Code's usage does, counts input_tokens without it.
func (r *Reader) usage(rec codex.Record, it item) []event.Envelope {
	if it.Info == nil || it.Info.Last == nil || it.Info.Total == nil || *it.Info.Total == r.total || rec.Ordinal == nil {
		return nil
	}
	r.total = *it.Info.Total
	last := it.Info.Last
	id := r.thread + ":" + strconv.FormatInt(*rec.Ordinal, 10)
	// Its turn and agent as every record's: the prompt id is the turn's
	// for the main agent's only (event.PromptOf), as on the hooks' events;
	// a subagent's turn is no prompt of the user's.
	p := r.common(r.turn)
	p["message_id"] = id
	p["usage"] = map[string]int64{
		"input_tokens":                max(last.Input-last.CachedInput, 0),
		"cache_read_input_tokens":     last.CachedInput,
		"cache_creation_input_tokens": last.CacheWrite,
		"output_tokens":               last.Output,
	}
	if r.model != "" {
		p["model"] = r.model
	}
	return []event.Envelope{r.envelope(p, UsageEvent, "usage-"+strconv.FormatInt(*rec.Ordinal, 10), rec.Timestamp, nil)}
}

func (r *Reader) payload(c *call) map[string]any {
	p := r.common(c.turn)
	p["tool_name"], p["tool_input"], p["tool_use_id"] = c.name, c.input, c.id
	return p
}

// common returns the fields every payload the rollout gives carries, as
// Codex's hooks send them: the session, the rollout, the directory, the
// turn, and in a subagent's rollout the agent — and its nickname, which
// no hook sends: so that the model names a subagent whose spawn call's
// response it has not (or that named none).
func (r *Reader) common(turn string) map[string]any {
	p := map[string]any{"session_id": r.session, "transcript_path": r.path, "cwd": r.cwd}
	if turn != "" {
		p["turn_id"] = turn
	}
	if r.thread != r.session {
		p["agent_id"] = r.thread // a subagent's rollout: its thread is the agent
		if r.sum.Nickname != "" {
			p["agent_nickname"] = r.sum.Nickname
		}
	}
	return p
}

// Read reads the rollout at path into envelopes, in the file's order; host
// and user are the envelopes'. A line that is not a record is skipped, and
// counted in lost when what it held is lost (Stats). Its errors are
// *fs.PathError naming path (patherr.Strip words them for a message that
// names it), as Summarize's.
func Read(path, host, user string) (envs []event.Envelope, lost Stats, err error) {
	r, err := read(path, host, user, func(r *Reader, envs1 []event.Envelope) bool {
		envs = append(envs, envs1...)
		return true
	})
	if err != nil {
		return nil, Stats{}, err
	}
	return envs, r.Lost(), nil
}

// Summarize reads the rollout at path for its Summary. keep is asked once,
// as soon as the session_meta record is read (the thread, its session,
// cwd and source are known): when it says no, the rest of the file is not
// read and ok is false.
func Summarize(path string, keep func(Summary) bool) (s Summary, ok bool, err error) {
	asked, kept := false, false
	r, err := read(path, "", "", func(r *Reader, _ []event.Envelope) bool {
		if asked || r.session == "" {
			return true
		}
		asked, kept = true, keep(r.Summary())
		return kept
	})
	if err != nil || !kept {
		return Summary{}, false, err
	}
	return r.Summary(), true, nil
}

// read reads the rollout at path record after record, handing each
// record's envelopes to each until it returns false. A last line with no
// newline is read as a record too: the file is taken as it stands.
func read(path, host, user string, each func(*Reader, []event.Envelope) bool) (*Reader, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return nil, err // an *fs.PathError naming path
	}
	defer f.Close()
	r := NewReader(path, host, user)
	lr := lines.NewReader(f, 64<<10, MaxLine)
	for {
		line, fl, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if fl&lines.Long != 0 {
			r.lost.Long++
			continue
		}
		if !each(r, r.Record(line)) && fl&lines.Unterminated == 0 {
			return r, nil
		}
	}
	if r.session == "" {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errNoSessionMeta}
	}
	return r, nil
}

// errNoSessionMeta is read's error for a file without the record every
// rollout starts with.
var errNoSessionMeta = errors.New("no session_meta record: not a Codex rollout")

func (r *Reader) envelope(p map[string]any, name, callID string, at time.Time, exit *int) event.Envelope {
	p["hook_event_name"] = name
	b, _ := json.Marshal(p)
	return event.Envelope{
		ID:      "rollout:" + r.thread + ":" + callID + ":" + name,
		Runtime: event.RuntimeCodex, Kind: event.KindRollout, ReceivedAt: at.UTC(),
		Host: r.host, User: r.user, ExitCode: exit, Payload: b,
	}
}

// blockedPrefix starts the output Codex gives the model for a call a
// PreToolUse hook denied: "Command blocked by PreToolUse hook: <reason>.
// Command: <command>".
const blockedPrefix = "Command blocked by PreToolUse hook: "

// blocked returns the reason of a call a PreToolUse hook denied, from its
// output.
func blocked(output any) (string, bool) {
	s, ok := output.(string)
	if !ok || !strings.HasPrefix(s, blockedPrefix) {
		return "", false
	}
	why := s[len(blockedPrefix):]
	if i := strings.LastIndex(why, ". Command: "); i >= 0 {
		why = why[:i]
	}
	return why, true
}

// hookView returns the tool name and input Codex's hooks give a call:
// exec_command is Bash with {"command": cmd}, a freeform tool's input is
// {"command": text}, wait_agent has its namespace glued on.
func hookView(it item) (string, json.RawMessage) {
	switch {
	case it.Type == "custom_tool_call":
		b, _ := json.Marshal(map[string]string{"command": it.Input})
		return it.Name, b
	case it.Name == "exec_command":
		var a struct {
			Cmd string `json:"cmd"`
		}
		_ = json.Unmarshal([]byte(it.Arguments), &a)
		b, _ := json.Marshal(map[string]string{"command": a.Cmd})
		return "Bash", b
	}
	name := it.Name
	if it.Namespace != "" && it.Name != "spawn_agent" {
		name = it.Namespace + it.Name
	}
	in := json.RawMessage(it.Arguments)
	if !json.Valid(in) {
		b, _ := json.Marshal(map[string]string{"arguments": it.Arguments})
		in = b
	}
	return name, in
}

// Tail follows one rollout file as Codex appends to it: each Next reads
// the complete lines written since the last, from the offset where it
// stopped, so that no line is read twice; a last line still being written
// is left for the next call, and a line longer than the bound on a record
// is passed over without being held.
type Tail struct {
	r    *Reader
	off  int64
	skip bool // within a line past MaxLine
}

// NewTail returns a Tail of the rollout at path, from its start.
func NewTail(path, host, user string) *Tail { return &Tail{r: NewReader(path, host, user)} }

// Offset returns how far the file has been read.
func (t *Tail) Offset() int64 { return t.off }

// Session returns the rollout's session; "" until its session_meta
// record was read.
func (t *Tail) Session() string { return t.r.Session() }

// Lost returns the lines the Tail has lost so far, as Read counts them: a
// line above MaxLine counts once it ends, however many calls it spans; a
// torn last line is not lost, but read whole by a later call.
func (t *Tail) Lost() Stats { return t.r.Lost() }

// ResumeTail returns a Tail of the rollout at path that goes on from off,
// an Offset a Tail of it reached before (the collector's, before it
// restarted): the lines before off are read again for what the Reader
// keeps (the session's identity, the calls still waiting for their
// results, the token total), their envelopes dropped, so that Next
// returns only what the rollout gained since, as the first Tail would
// have. Lost counts the lines lost before off too. An off that is not
// where a line ends (the file was rewritten) leaves the Tail at the last
// line end before it.
func ResumeTail(path, host, user string, off int64) (*Tail, error) {
	t := NewTail(path, host, user)
	if err := t.SkipTo(off); err != nil {
		return nil, err
	}
	return t, nil
}

// SkipTo moves the Tail on to off, past lines another reader read and
// stored since the Tail's last Next (an import of the rollout, reading on
// from the offset the Tail reached): they are read for what the Reader
// keeps, their envelopes dropped, as ResumeTail reads the lines before
// its offset, so that Next returns only what follows them. Lost counts
// the lines lost among them too. An off at or before the Tail's Offset
// changes nothing; one not where a line ends leaves the Tail at the last
// line end before it.
func (t *Tail) SkipTo(off int64) error {
	if off <= t.off {
		return nil
	}
	_, err := t.next(off)
	return err
}

// Reached is what ReadOn read of a rollout.
type Reached struct {
	// Offset is where the next ReadOn goes on from: the end of the last
	// whole line (a last line still being written is left for it).
	Offset int64
	// Lost counts the lines passed over after the offset read on from
	// (Stats): those before it were counted by the read that passed them.
	Lost Stats
	// FromStart says the offset given was not trusted, and the file read
	// from its start: it lies past the file's end or not where a line ends
	// (the file was truncated or replaced since).
	FromStart bool
}

// ReadOn reads the rollout at path on from off, the Offset a Tail of it
// reached before (an import's, or the collector's as it followed it; 0
// reads it whole), into the envelopes of the lines after off, as a Tail
// that had read on would have made them: the lines before off are read
// again for the Reader's state (ResumeTail), their envelopes dropped. An
// off past the file's end or not at a line end is the offset of another
// file (the rollout was truncated or replaced): the file is read from its
// start, Reached.FromStart set. A replaced file that happens to have a
// line end at off cannot be told from one that grew. A file without a
// session_meta record is no rollout: an *fs.PathError naming path, as
// Read's.
func ReadOn(path, host, user string, off int64) ([]event.Envelope, Reached, error) {
	t, fromStart := NewTail(path, host, user), off > 0
	if off > 0 {
		rt, err := ResumeTail(path, host, user, off)
		if err != nil {
			return nil, Reached{}, err
		}
		// ResumeTail stops short of an off past the end or within a line.
		if rt.Offset() == off {
			t, fromStart = rt, false
		}
	}
	before := t.Lost()
	envs, err := t.Next()
	if err != nil {
		return nil, Reached{}, err
	}
	if t.Session() == "" {
		return nil, Reached{}, &fs.PathError{Op: "read", Path: path, Err: errNoSessionMeta}
	}
	lost := t.Lost()
	return envs, Reached{
		Offset:    t.Offset(),
		Lost:      Stats{Long: lost.Long - before.Long, Unreadable: lost.Unreadable - before.Unreadable},
		FromStart: fromStart,
	}, nil
}

// Next reads the lines appended since the last call into envelopes.
func (t *Tail) Next() ([]event.Envelope, error) { return t.next(-1) }

// next reads the lines from the Tail's offset into envelopes to the end of
// the file; with end not negative, only up to end and for the Reader's
// state alone, holding no envelope (ResumeTail).
func (t *Tail) next(end int64) ([]event.Envelope, error) {
	f, _, err := regfile.Open(t.r.path)
	if err != nil {
		return nil, fmt.Errorf("cannot open rollout: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return nil, fmt.Errorf("cannot read rollout %s: %w", t.r.path, err)
	}
	var in io.Reader = f
	if end >= 0 {
		in = io.LimitReader(f, max(end-t.off, 0))
	}
	lr := lines.NewReader(in, 64<<10, MaxLine)
	if t.skip {
		lr.ResumeLong()
	}
	from := t.off
	var envs []event.Envelope
	for {
		line, fl, err := lr.Next()
		switch {
		case err == io.EOF:
			return envs, nil
		case err != nil:
			return envs, fmt.Errorf("cannot read rollout %s: %w", t.r.path, err)
		case fl == lines.Long|lines.Unterminated:
			// Past MaxLine and not ended yet: what was read of it is
			// passed over for good, the rest next time.
			t.off, t.skip = from+lr.Consumed(), true
		case fl&lines.Unterminated != 0:
			// A torn line: read again, whole, next time.
		default:
			t.off, t.skip = from+lr.Offset(), false
			if fl&lines.Long == 0 {
				if e := t.r.Record(line); end < 0 {
					envs = append(envs, e...)
				}
			} else {
				t.r.lost.Long++
			}
		}
	}
}
