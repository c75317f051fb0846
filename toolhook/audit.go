package toolhook

import (
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/privacy"
)

// AuditOptions configure an AuditRecorder.
type AuditOptions struct {
	// Privacy is applied to each call's input, output and error before
	// they are written, as the hook applies it to a payload (see package
	// privacy). The zero value means privacy.DefaultOptions().
	Privacy *privacy.Options
	// BatchSize is how many calls are kept before they are written in one
	// write (default 64; 1 writes each call as it ends). Flush writes the
	// rest.
	BatchSize int
	// NoEvents writes tool_calls.jsonl only, not the calls' events: a
	// trail at a lower cost, that previews inputs and outputs but does
	// not keep them whole.
	NoEvents bool
}

// AuditRecorder is a Recorder that writes each call to the audit trail as
// `hookwatch export` writes a session: its hook events as lines of
// events.jsonl (a PreToolUse, then a PostToolUse or PostToolUseFailure; see
// Forwarder) and the call as a line of tool_calls.jsonl — the records,
// encoder, hash chain and files of package audit — the starts and stops of
// sub-agents (AgentEvent) as their SubagentStart and SubagentStop events,
// and the end of a session (Executor.EndSession) as its SessionEnd event.
// Inputs, outputs and errors pass through the privacy rules first, once, and
// the call's record previews what they kept, as an export does. An event's
// seq counts the events the AuditRecorder wrote, from 1.
//
// Give it a Writer made with audit.WriterOptions{UniqueCalls: true}: an
// Executor records each call once, and the Writer need not remember them.
//
// Each call's lines are encoded and chained as it ends, into buffers the
// recorder and the Writer reuse (audit.Writer.AppendEvent), and written
// BatchSize calls at a time; call Flush before the process ends (and
// whenever the trail must be current). A write error is kept and returned
// by the next Flush; the calls of that batch are lost, the agent is not
// stopped. An AuditRecorder is safe for concurrent use.
type AuditRecorder struct {
	w       *audit.Writer
	privacy privacy.Options
	batch   int
	events  bool

	mu      sync.Mutex
	seq     int64
	pending int // calls appended since the last write
	err     error
}

// NewAuditRecorder returns an AuditRecorder writing to w.
func NewAuditRecorder(w *audit.Writer, o AuditOptions) *AuditRecorder {
	r := &AuditRecorder{w: w, privacy: privacy.DefaultOptions(), batch: o.BatchSize, events: !o.NoEvents}
	if o.Privacy != nil {
		r.privacy = *o.Privacy
	}
	if r.batch <= 0 {
		r.batch = 64
	}
	return r
}

// recording is what recording one call needs — the encoded members, the
// records, their payloads and ids — kept for the next call: the records
// are encoded before Record returns, and nothing of them is kept.
type recording struct {
	bufs     memberBufs
	payloads []byte
	ids      [2][36]byte
	events   [2]audit.Event
	call     audit.ToolCall
	end      callEnd
}

var recordings = sync.Pool{New: func() any { return new(recording) }}

// Record encodes c's lines, and writes the batch when it is full.
func (r *AuditRecorder) Record(c *Call) {
	rc := recordings.Get().(*recording)
	defer recordings.Put(rc)
	// The privacy rules and the payloads outside the lock: concurrent
	// agents wait for each other only to chain their lines.
	m := membersOf(c, r.privacy, &rc.bufs)
	toolCallRecord(&rc.call, &rc.end, c, &m)
	var events []audit.Event
	if r.events {
		events = eventRecords(rc, c, &m)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range events {
		r.seq++
		events[i].Seq = r.seq
		r.fail(r.w.AppendEvent(&events[i]))
	}
	r.fail(r.w.AppendToolCall(&rc.call))
	if r.pending++; r.pending >= r.batch {
		r.flushLocked()
	}
}

// RecordEnd writes the end of a session (Executor.EndSession) as a line of
// its events.jsonl: the SessionEnd event the Forwarder sends, which an
// export of the forwarded session holds too. With AuditOptions.NoEvents,
// it writes nothing.
func (r *AuditRecorder) RecordEnd(e *SessionEnd) {
	r.appendEvent(&audit.Event{
		SessionID: e.SessionID, ID: event.NewID(e.At), Time: e.At.UTC(), Event: event.SessionEnd,
		Payload: appendEndPayload(nil, e),
	})
}

// RecordAgent writes a sub-agent's start or stop as a line of its
// session's events.jsonl: the SubagentStart or SubagentStop the Forwarder
// sends. With AuditOptions.NoEvents, it writes nothing.
func (r *AuditRecorder) RecordAgent(e *AgentEvent) {
	r.appendEvent(&audit.Event{
		SessionID: e.SessionID, ID: event.NewID(e.At), Time: e.At.UTC(), Event: e.Event,
		AgentID: e.AgentID, AgentType: &e.AgentType, PromptID: e.TaskID,
		Payload: appendAgentPayload(nil, e),
	})
}

// appendEvent writes rec, an event of the session's own, as a hook event
// of runtime go-sdk, unless the recorder writes no events.
func (r *AuditRecorder) appendEvent(rec *audit.Event) {
	if !r.events {
		return
	}
	rec.Schema, rec.Runtime, rec.Kind = audit.EventSchema, event.RuntimeGoSDK, event.KindHook
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	rec.Seq = r.seq
	r.fail(r.w.AppendEvent(rec))
	if r.pending++; r.pending >= r.batch {
		r.flushLocked()
	}
}

// Flush writes the calls recorded so far and returns the first write error
// since the last Flush.
func (r *AuditRecorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked()
	err := r.err
	r.err = nil
	return err
}

func (r *AuditRecorder) flushLocked() {
	r.fail(r.w.Flush())
	r.pending = 0
}

func (r *AuditRecorder) fail(err error) {
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("cannot write the audit trail: %w", err)
	}
}

// ToolCallRecord returns the audit record of a finished call, its input,
// output and error passed through the privacy rules o. The task is recorded
// as the call's prompt id.
func ToolCallRecord(c *Call, o privacy.Options) audit.ToolCall {
	m := membersOf(c, o, nil)
	var rec audit.ToolCall
	toolCallRecord(&rec, new(callEnd), c, &m)
	return rec
}

// callEnd holds what a call's record points to.
type callEnd struct {
	at time.Time
	ms int64
}

// toolCallRecord sets rec to the record of c, its end in end.
func toolCallRecord(rec *audit.ToolCall, end *callEnd, c *Call, m *members) {
	*end = callEnd{c.Start.Add(c.Duration).UTC(), c.Duration.Milliseconds()}
	*rec = audit.ToolCall{
		Schema: audit.ToolCallSchema, SessionID: c.SessionID, ToolUseID: c.ToolUseID, ToolName: c.ToolName,
		AgentID: c.AgentID, AgentType: agentType(c), ParentToolUseID: c.ParentToolUseID, Depth: c.Depth, PromptID: c.TaskID,
		StartedAt: c.Start.UTC(), EndedAt: &end.at, DurationMS: &end.ms, Status: c.Status,
		InputPreview: audit.Preview(m.input), OutputPreview: m.outputPreview,
		Decision: m.decision,
	}
	if !m.previewed {
		rec.OutputPreview = audit.Preview(m.output)
	}
	if m.errText != nil {
		rec.Error, _ = jsonscan.Unquote(m.errText)
	}
}

// eventRecords sets the records of c's PreToolUse and of the event that
// ended it (none when it never ran), without their seq, in rc, and returns
// them. They share rc's memory.
func eventRecords(rc *recording, c *Call, m *members) []audit.Event {
	post := postEvent(c)
	// Both payloads in one buffer, sliced once it no longer grows.
	buf := rc.payloads[:0]
	buf = appendPayload(buf, c, event.PreToolUse, m)
	preEnd := len(buf)
	if post != "" {
		buf = appendPayload(buf, c, post, m)
	}
	rc.payloads = buf
	ev := func(i int, name string, at time.Time, payload []byte) {
		id := event.AppendNewID(rc.ids[i][:0], at)
		rc.events[i] = audit.Event{
			Schema: audit.EventSchema, SessionID: c.SessionID, ID: unsafe.String(&id[0], len(id)), Time: at.UTC(),
			Runtime: event.RuntimeGoSDK, Kind: event.KindHook, Event: name, AgentID: c.AgentID, AgentType: agentType(c),
			ToolName: c.ToolName, ToolUseID: c.ToolUseID, PromptID: c.TaskID,
			Payload: payload,
		}
	}
	ev(0, event.PreToolUse, c.Start, buf[:preEnd])
	rc.events[0].Decision = m.decision
	if post == "" {
		return rc.events[:1]
	}
	ev(1, post, c.Start.Add(c.Duration), buf[preEnd:])
	return rc.events[:2]
}

// agentType is the agent_type of c's records: null for the main agent.
func agentType(c *Call) *string {
	if c.AgentID == "" {
		return nil
	}
	return &c.AgentType
}

var (
	_ SessionRecorder = (*AuditRecorder)(nil)
	_ AgentRecorder   = (*AuditRecorder)(nil)
)
