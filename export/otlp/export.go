package otlp

import (
	"context"
	"encoding/json"
	"fmt"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store"
)

// SendFunc sends one request's spans; (*Client).Send is one.
type SendFunc func(ctx context.Context, rs []*tracepb.ResourceSpans) error

// ExportSession sends the trace of one stored session, read from the
// model's rows (a throwaway id folded into a session exports that
// session), in requests of at most batch spans (DefaultBatchSpans when 0).
// Tool calls are read a page at a time, so memory stays bounded whatever
// the session's size. It returns the spans sent, and store.ErrNotFound for
// a session without a model.
func ExportSession(ctx context.Context, ms store.ModelStore, id string, send SendFunc, batch int) (int, error) {
	if batch <= 0 {
		batch = DefaultBatchSpans
	}
	sum, err := summaryOf(ctx, ms, id)
	if err != nil {
		return 0, err
	}
	id = sum.SessionID
	res := Resource(sum)
	sent := 0
	var buf []*tracepb.Span
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		rs := []*tracepb.ResourceSpans{{Resource: res, ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: buf}}}}
		if err := send(ctx, rs); err != nil {
			return fmt.Errorf("cannot export session %s: %w", id, err)
		}
		sent += len(buf)
		buf = nil
		return nil
	}
	add := func(sp *tracepb.Span) error {
		buf = append(buf, sp)
		if len(buf) >= batch {
			return flush()
		}
		return nil
	}

	err = store.EachAgent(ctx, ms, store.AgentFilter{SessionID: id, Limit: store.MaxLimit}, func(row store.AgentRow) error {
		var a attribution.Agent
		if err := json.Unmarshal(row.Doc, &a); err != nil {
			return fmt.Errorf("cannot decode agent %q of session %s: %w", row.AgentID, id, err)
		}
		for _, sp := range AgentSpans(sum, &a) {
			if err := add(sp); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return sent, fmt.Errorf("cannot export the agents of session %s: %w", id, err)
	}
	for i := range sum.Compactions {
		if err := add(CompactionSpan(sum, &sum.Compactions[i])); err != nil {
			return sent, err
		}
	}
	err = store.EachToolCall(ctx, ms, store.ToolCallFilter{SessionID: id, Limit: store.MaxLimit}, func(row store.ToolCallRow) error {
		var c attribution.ToolCall
		if err := json.Unmarshal(row.Doc, &c); err != nil {
			return fmt.Errorf("cannot decode tool call %q of session %s: %w", row.ToolUseID, id, err)
		}
		return add(CallSpan(sum, &c))
	})
	if err != nil {
		return sent, fmt.Errorf("cannot export the tool calls of session %s: %w", id, err)
	}
	return sent, flush()
}

// summaryOf reads the model of session id, following a throwaway id to the
// session it was folded into.
func summaryOf(ctx context.Context, ms store.ModelStore, id string) (*attribution.Session, error) {
	for range 2 {
		models, err := ms.SessionModels(ctx, []string{id})
		if err != nil {
			return nil, fmt.Errorf("cannot read the model of session %s: %w", id, err)
		}
		m, ok := models[id]
		if !ok {
			return nil, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
		}
		if m.AliasOf != "" {
			id = m.AliasOf
			continue
		}
		var s attribution.Session
		if err := json.Unmarshal(m.Summary, &s); err != nil {
			return nil, fmt.Errorf("cannot decode the model of session %s: %w", id, err)
		}
		return &s, nil
	}
	return nil, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
}
