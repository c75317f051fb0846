package toolhook

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hookwatch/hookwatch/audit"
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
}

// AuditRecorder is a Recorder that writes each call as a line of the audit
// trail's tool_calls.jsonl (schema audit.ToolCallSchema): the records,
// encoder, hash chain and files of package audit, the very ones `hookwatch
// export` writes. Inputs, outputs and errors pass through the privacy rules
// first, and are previewed as in an export.
//
// Calls are buffered and written BatchSize at a time; call Flush before the
// process ends (and whenever the trail must be current). A write error is
// kept and returned by the next Flush; the calls of that batch are lost, the
// agent is not stopped. An AuditRecorder is safe for concurrent use.
type AuditRecorder struct {
	w       *audit.Writer
	privacy privacy.Options
	batch   int

	mu      sync.Mutex
	pending []audit.ToolCall
	err     error
}

// NewAuditRecorder returns an AuditRecorder writing to w.
func NewAuditRecorder(w *audit.Writer, o AuditOptions) *AuditRecorder {
	r := &AuditRecorder{w: w, privacy: privacy.DefaultOptions(), batch: o.BatchSize}
	if o.Privacy != nil {
		r.privacy = *o.Privacy
	}
	if r.batch <= 0 {
		r.batch = 64
	}
	return r
}

// Record adds c to the batch, and writes the batch when it is full.
func (r *AuditRecorder) Record(c *Call) {
	rec := ToolCallRecord(c, r.privacy)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(r.pending, rec)
	if len(r.pending) >= r.batch {
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
	if len(r.pending) == 0 {
		return
	}
	if _, _, err := r.w.WriteCalls(r.pending); err != nil && r.err == nil {
		r.err = fmt.Errorf("cannot write the audit trail: %w", err)
	}
	clear(r.pending) // drop references to the written records' strings
	r.pending = r.pending[:0]
}

// ToolCallRecord returns the audit record of a finished call, its input,
// output and error passed through the privacy rules o. The task is recorded
// as the call's prompt id.
func ToolCallRecord(c *Call, o privacy.Options) audit.ToolCall {
	p := map[string]json.RawMessage{}
	if b, err := json.Marshal(c.Input); err == nil && c.Input != nil {
		p["tool_input"] = b
	}
	if b, err := json.Marshal(c.Output); err == nil && c.Output != nil {
		p["tool_response"] = b
	}
	if c.Err != nil {
		b, _ := json.Marshal(c.Err.Error())
		p["error"] = b
	}
	privacy.Apply(p, o)
	end := c.Start.Add(c.Duration).UTC()
	ms := c.Duration.Milliseconds()
	rec := audit.ToolCall{
		Schema: audit.ToolCallSchema, SessionID: c.SessionID, ToolUseID: c.ToolUseID, ToolName: c.ToolName,
		AgentID: c.AgentID, ParentToolUseID: c.ParentToolUseID, Depth: c.Depth, PromptID: c.TaskID,
		StartedAt: c.Start.UTC(), EndedAt: &end, DurationMS: &ms, Status: c.Status,
		InputPreview: audit.Preview(p["tool_input"]), OutputPreview: audit.Preview(p["tool_response"]),
		Decision: json.RawMessage("null"),
	}
	if c.AgentID != "" {
		rec.AgentType = &c.AgentType
	}
	if c.Err != nil {
		json.Unmarshal(p["error"], &rec.Error)
	}
	if c.Decision != nil {
		if a := c.Decision.Audit(); a != nil {
			if b, err := json.Marshal(a); err == nil {
				rec.Decision = b
			}
		}
	}
	return rec
}
