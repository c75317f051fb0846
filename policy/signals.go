package policy

import (
	"context"

	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"

	"github.com/hookwatch/hookwatch/attribution"
)

// SignalSource returns the signals (attribution.Signals) of the agents of
// a session, as the caller's model of it stands: the collector, which keeps
// the model, answers with it. A one-shot hook process has no model and no
// source: conditions then read no signal raised and no failure.
type SignalSource func(ctx context.Context, sessionID string) ([]attribution.AgentSignals, error)

// signalKinds are the keys of `session.signals` and `agent.signals`.
var signalKinds = attribution.SignalKinds

// sessionType and agentType are the types of the variables `session` and
// `agent`: the signals of the event's session (raised by any of its
// agents) and of the event's agent, with its run of failures.
func sessionType() types.Type { return types.Map{"signals": signalsType()} }

func agentType() types.Type {
	return types.Map{"signals": signalsType(), "failures_in_a_row": types.Float64}
}

func signalsType() types.Type {
	t := types.Map{}
	for _, k := range signalKinds {
		t[k] = types.Bool
	}
	return t
}

// usesSignals reports whether a program reads session or agent: only
// rules that do make the evaluation ask for the signals.
func usesSignals(prog *vm.Program) bool { return usesVariable(prog, "session", "agent") }

// noSignals sets `session` and `agent` to nothing raised.
func noSignals(env map[string]any) {
	env["session"] = map[string]any{"signals": signalSet(nil)}
	env["agent"] = map[string]any{"signals": signalSet(nil), "failures_in_a_row": float64(0)}
}

func signalSet(ss []attribution.Signal) map[string]any {
	m := make(map[string]any, len(signalKinds))
	for _, k := range signalKinds {
		m[k] = false
	}
	for _, s := range ss {
		m[s.Kind] = true
	}
	return m
}

// signals sets `session` and `agent` from the source, once per evaluation.
// A source that fails leaves nothing raised and a warning: fail-open.
func (ev *evaluation) signals() {
	if ev.signalsRead {
		return
	}
	ev.signalsRead = true
	env := ev.env()
	noSignals(env)
	if ev.signalSrc == nil {
		return
	}
	agents, err := ev.signalSrc(ev.ctx, asString(ev.payload["session_id"]))
	if err != nil {
		ev.warnings = append(ev.warnings, "cannot read the session's signals (none assumed): "+err.Error())
		return
	}
	agentID := asString(ev.payload["agent_id"])
	var all []attribution.Signal
	for _, a := range agents {
		all = append(all, a.Signals...)
		if a.AgentID == agentID {
			env["agent"] = map[string]any{"signals": signalSet(a.Signals), "failures_in_a_row": float64(a.FailuresInARow)}
		}
	}
	env["session"] = map[string]any{"signals": signalSet(all)}
}
