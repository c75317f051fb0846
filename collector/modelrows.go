package collector

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store"
)

// modelRows reads back the rows of the session model the store holds — a
// session's agents and its tool calls — decoded into the model's own types.
// It is the one reader of them in the collector: the signals, the files the
// stale guard checks, the stall sweep's start, the per-agent metrics'
// baseline, a comparison and a virtual session's agents all read through it.
//
// A row whose document cannot be decoded is skipped, as if it were not
// stored, and counted in hookwatch_model_rows_undecodable_total; it is never
// an error. The modeler writes every document from the model's types, so such
// a row is damage or a document of another version: one must neither take
// down every endpoint of its session nor stop its lineage group from loading,
// and the counter says that an answer was computed without it. A session's
// summary follows the same rule (decodeSummary: nil, as when none is stored).
type modelRows struct {
	st          store.ModelStore
	undecodable *metrics.Counter
}

func newModelRows(st store.ModelStore, set *metrics.Set) modelRows {
	return modelRows{st: st, undecodable: set.GetOrCreateCounter(`hookwatch_model_rows_undecodable_total`)}
}

// eachAgent calls fn with each agent of session id, in the listing's order,
// until fn returns an error, which it returns as it is.
func (r modelRows) eachAgent(ctx context.Context, id string, fn func(*attribution.Agent) error) error {
	return r.eachAgentOf(ctx, id, nil, fn)
}

// eachAgentOf is eachAgent of the agents of session id named in ids
// alone (nil: every one; at most store.MaxFilterIDs).
func (r modelRows) eachAgentOf(ctx context.Context, id string, ids []string, fn func(*attribution.Agent) error) error {
	each := decoded(r.undecodable, fn)
	return store.EachAgent(ctx, r.st, store.AgentFilter{SessionID: id, AgentIDs: ids, Limit: store.MaxLimit}, func(row store.AgentRow) error {
		return each(row.Doc)
	})
}

// agents returns every agent of session id, in the listing's order.
func (r modelRows) agents(ctx context.Context, id string) ([]*attribution.Agent, error) {
	var out []*attribution.Agent
	err := r.eachAgent(ctx, id, func(a *attribution.Agent) error {
		out = append(out, a)
		return nil
	})
	return out, err
}

// eachCall calls fn with each call of session id, by start, until fn
// returns an error, which it returns as it is (errEnough: it has read all
// it may).
func (r modelRows) eachCall(ctx context.Context, id string, fn func(*attribution.ToolCall) error) error {
	return r.eachCallOf(ctx, id, nil, fn)
}

// eachCallOf is eachCall of the calls of session id named in ids alone
// (nil: every one; at most store.MaxFilterIDs).
func (r modelRows) eachCallOf(ctx context.Context, id string, ids []string, fn func(*attribution.ToolCall) error) error {
	each := decoded(r.undecodable, fn)
	return store.EachToolCall(ctx, r.st, store.ToolCallFilter{SessionID: id, ToolUseIDs: ids, Limit: store.MaxLimit}, func(row store.ToolCallRow) error {
		return each(row.Doc)
	})
}

// decoded returns what calls fn with a document decoded as a T, and counts
// in undecodable, without calling fn, a document that cannot be.
func decoded[T any](undecodable *metrics.Counter, fn func(*T) error) func(doc []byte) error {
	return func(doc []byte) error {
		v := new(T)
		if json.Unmarshal(doc, v) != nil {
			undecodable.Inc()
			return nil
		}
		return fn(v)
	}
}

// calls returns the calls of session id, by start: the first max of them
// when max > 0, truncated set when there were more.
func (r modelRows) calls(ctx context.Context, id string, max int) (calls []*attribution.ToolCall, truncated bool, err error) {
	err = r.eachCall(ctx, id, func(c *attribution.ToolCall) error {
		if max > 0 && len(calls) == max {
			truncated = true
			return errEnough
		}
		calls = append(calls, c)
		return nil
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	return calls, truncated, err
}

// errEnough stops a walk over stored rows that has read all it may.
var errEnough = errors.New("enough rows read")
