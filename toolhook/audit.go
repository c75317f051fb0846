package toolhook

import (
	"fmt"
	"sync"
	"time"

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
// encoder, hash chain and files of package audit. Inputs, outputs and
// errors pass through the privacy rules first, once, and the call's record
// previews what they kept, as an export does. An event's seq counts the
// events the AuditRecorder wrote, from 1.
//
// Give it a Writer made with audit.WriterOptions{UniqueCalls: true}: an
// Executor records each call once, and the Writer need not remember them.
//
// Calls are buffered and written BatchSize at a time; call Flush before the
// process ends (and whenever the trail must be current). A write error is
// kept and returned by the next Flush; the calls of that batch are lost, the
// agent is not stopped. An AuditRecorder is safe for concurrent use.
type AuditRecorder struct {
	w       *audit.Writer
	privacy privacy.Options
	batch   int
	events  bool

	mu      sync.Mutex
	seq     int64
	pending []audit.Event
	calls   []audit.ToolCall
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

// Record adds c's records to the batch, and writes the batch when it is
// full.
func (r *AuditRecorder) Record(c *Call) {
	m := membersOf(c, r.privacy)
	call := toolCallRecord(c, &m)
	var pre, post audit.Event
	if r.events {
		pre, post = eventRecords(c, &m)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.events {
		r.seq++
		pre.Seq = r.seq
		r.pending = append(r.pending, pre)
		if post.Schema != "" {
			r.seq++
			post.Seq = r.seq
			r.pending = append(r.pending, post)
		}
	}
	r.calls = append(r.calls, call)
	if len(r.calls) >= r.batch {
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
	// Each session's records in order, a run of one session at a time:
	// an agent has one session, or a few in turn.
	for evs := r.pending; len(evs) > 0; {
		n := 1
		for n < len(evs) && evs[n].SessionID == evs[0].SessionID {
			n++
		}
		r.fail(r.w.WriteEvents(evs[0].SessionID, evs[:n]))
		evs = evs[n:]
	}
	for calls := r.calls; len(calls) > 0; {
		n := 1
		for n < len(calls) && calls[n].SessionID == calls[0].SessionID {
			n++
		}
		_, err := r.w.WriteToolCalls(calls[0].SessionID, calls[:n])
		r.fail(err)
		calls = calls[n:]
	}
	// Drop the references to the written records' strings and payloads.
	clear(r.pending)
	clear(r.calls)
	r.pending, r.calls = r.pending[:0], r.calls[:0]
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
	m := membersOf(c, o)
	return toolCallRecord(c, &m)
}

func toolCallRecord(c *Call, m *members) audit.ToolCall {
	// One allocation for both of the record's pointers.
	end := &struct {
		at time.Time
		ms int64
	}{c.Start.Add(c.Duration).UTC(), c.Duration.Milliseconds()}
	rec := audit.ToolCall{
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
	return rec
}

// eventRecords returns the records of c's PreToolUse and of the event that
// ended it (a zero Event when it never ran), without their seq.
func eventRecords(c *Call, m *members) (pre, post audit.Event) {
	// Both payloads in one buffer.
	buf := make([]byte, 0, 2*payloadSize(c, m))
	ev := func(name string, at time.Time) audit.Event {
		from := len(buf)
		buf = appendPayload(buf, c, name, m)
		e := audit.Event{
			Schema: audit.EventSchema, SessionID: c.SessionID, ID: event.NewID(at), Time: at.UTC(),
			Runtime: event.RuntimeGoSDK, Event: name, AgentID: c.AgentID, AgentType: agentType(c),
			ToolName: c.ToolName, ToolUseID: c.ToolUseID, PromptID: c.TaskID,
			Payload: buf[from:len(buf):len(buf)],
		}
		if name == event.PreToolUse {
			e.Decision = m.decision
		}
		return e
	}
	pre = ev(event.PreToolUse, c.Start)
	if name := postEvent(c); name != "" {
		post = ev(name, c.Start.Add(c.Duration))
	}
	return pre, post
}

// agentType is the agent_type of c's records: null for the main agent.
func agentType(c *Call) *string {
	if c.AgentID == "" {
		return nil
	}
	return &c.AgentType
}
