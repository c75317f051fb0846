package audit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store"
)

// Source is what an export reads: the event log and the session model.
type Source interface {
	store.EventLog
	store.ModelStore
}

// ExportStats is what ExportSession wrote.
type ExportStats struct {
	Events, ToolCalls int
	// ModelBehind is set when the session's model was computed from fewer
	// events than the log holds (no collector has applied the latest ones
	// yet): the tool calls are the model's as stored.
	ModelBehind bool
}

// ExportSession writes the whole trail of one session to w: every stored
// event of it in Seq order, then every call of its model in start order.
// progress, when not nil, is called after each page with the events
// written so far. Memory stays within a page of events and the output
// previews of the session's calls.
func ExportSession(ctx context.Context, src Source, w *Writer, sessionID string, progress func(events int)) (ExportStats, error) {
	var st ExportStats
	sess, err := src.Session(ctx, sessionID)
	if err != nil {
		return st, fmt.Errorf("cannot read session %q: %w", sessionID, err)
	}
	models, err := src.SessionModels(ctx, []string{sessionID})
	if err != nil {
		return st, fmt.Errorf("cannot read the model of session %q: %w", sessionID, err)
	}
	st.ModelBehind = models[sessionID].Seq < sess.LastSeq

	outputs := Outputs{}
	recs := make([]Event, 0, store.MaxLimit)
	f := store.EventFilter{SessionID: sessionID, Limit: store.MaxLimit}
	for {
		page, err := src.Events(ctx, f)
		if err != nil {
			return st, fmt.Errorf("cannot read the events of session %q: %w", sessionID, err)
		}
		recs = recs[:0]
		for i := range page.Events {
			e := &page.Events[i]
			r, err := EventOf(e)
			if err != nil {
				return st, err
			}
			recs = append(recs, r)
			outputs.Add(e)
		}
		if err := w.WriteEvents(sessionID, recs); err != nil {
			return st, err
		}
		st.Events += len(recs)
		if progress != nil {
			progress(st.Events)
		}
		if page.Next == "" || len(page.Events) == 0 {
			break
		}
		f.Cursor = page.Next
	}

	calls := make([]ToolCall, 0, store.MaxLimit)
	cf := store.ToolCallFilter{SessionID: sessionID, Order: store.ByStart, Limit: store.MaxLimit}
	for {
		page, err := src.ToolCalls(ctx, cf)
		if err != nil {
			return st, fmt.Errorf("cannot read the tool calls of session %q: %w", sessionID, err)
		}
		calls = calls[:0]
		for _, row := range page.ToolCalls {
			var c attribution.ToolCall
			if err := json.Unmarshal(row.Doc, &c); err != nil {
				return st, fmt.Errorf("cannot read tool call %q of session %q: %w", row.ToolUseID, sessionID, err)
			}
			calls = append(calls, ToolCallOf(&c, outputs[c.ToolUseID]))
		}
		n, err := w.WriteToolCalls(sessionID, calls)
		if err != nil {
			return st, err
		}
		st.ToolCalls += n
		if page.Next == "" || len(page.ToolCalls) == 0 {
			break
		}
		cf.Cursor = page.Next
	}
	return st, nil
}
