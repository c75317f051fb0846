// Package toolhook runs the tools of an agent written in Go through hooks,
// as Claude Code runs its own tools through command hooks: pre hooks that can
// let a call through, skip it, abort it, rewrite its input and give a
// permission decision; post hooks that can rewrite its output or abort; and
// a record of every call, attributed to its session, task, phase and agent
// in the tree of agents that spawned each other.
//
// It shares hookwatch's contracts rather than restating them: patterns are
// Claude Code's matchers (package matcher), decisions merge with
// decision.Merge (deny > defer > ask > allow), the YAML policy files of
// package policy load into a Registry (LoadPolicy), and calls are recorded
// in the audit trail's tool-call schema (AuditRecorder).
//
// # Example
//
//	var hooks toolhook.Registry
//	// Claude Code's matcher syntax: exact names, lists, regular expressions.
//	hooks.Pre("process_refund", func(ctx context.Context, c *toolhook.Call) toolhook.PreResult {
//		if amount, _ := c.Input["amount"].(float64); amount > 500 {
//			return toolhook.PreResult{Decision: decision.Decision{
//				Verdict: decision.Deny,
//				Reasons: []string{"refunds above 500 go through escalate_to_human"},
//			}}
//		}
//		return toolhook.PreResult{}
//	})
//	// The very rules a team wrote for Claude Code.
//	if err := hooks.LoadPolicy(".hookwatch/policy.yaml"); err != nil {
//		log.Print(err) // invalid rules are left out, the others apply
//	}
//
//	// The audit trail: <dir>/<session>/events.jsonl and tool_calls.jsonl.
//	w, err := audit.NewWriter(dir, audit.WriterOptions{UniqueCalls: true})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer w.Close()
//	trail := toolhook.NewAuditRecorder(w, toolhook.AuditOptions{})
//	defer trail.Flush()
//
//	x := &toolhook.Executor{
//		Registry:  &hooks,
//		SessionID: "refunds-2026-11-25",
//		Recorder:  trail,
//		Tools: map[string]toolhook.Tool{
//			"process_refund": processRefund,
//			"Task": func(ctx context.Context, in map[string]any) (any, error) {
//				// A sub-agent: its calls are one level deeper, with this
//				// call as their parent; it starts now and stops when
//				// this call ends.
//				return runWorker(toolhook.SpawnAgent(ctx, "worker-1", "refund-checker"), in)
//			},
//		},
//	}
//	ctx := toolhook.WithTask(context.Background(), "ticket-4711")
//	out, err := x.Call(ctx, "process_refund", map[string]any{"amount": 800.0})
//	var denied *toolhook.DeniedError
//	if errors.As(err, &denied) {
//		// tell the model denied.Reason, as Claude Code would
//	}
//	// The work is done: the trail (and a collector) show the session ended.
//	x.EndSession(ctx, "")
//
// # Attribution
//
// Attribution travels in the context.Context, never in globals: WithSession,
// WithTask and WithPhase scope the calls made under a context, and
// SpawnAgent starts a sub-agent's scope (depth + 1, parent tool_use_id the
// call whose tool spawned it). Contexts can be handed to goroutines freely;
// parallel branches of the agent tree keep their own attribution.
//
// # Order and semantics
//
// For a call, the hooks whose matcher (and phase, see InPhase) select its
// tool run in registration order. Each pre hook sees the input as rewritten
// by the hooks before it. Skip and Abort end the pre hooks at once; then the
// merged decision applies: deny and defer refuse the call (DeniedError), ask
// runs it only if Executor.Approve agrees, a stop aborts it (AbortError).
// The tool runs with a context carrying the call (CurrentCall). Post hooks
// run in order over the output, also when the tool failed. Finally the
// Recorder gets the finished Call.
//
// # Recorders
//
// A call is recorded as the hook events Claude Code would have fired for
// it: a PreToolUse, then a PostToolUse or a PostToolUseFailure (none after
// a refused call), their payloads passed through the privacy rules (package
// privacy) as the hook passes a payload. A sub-agent is recorded as Claude
// Code records its own (AgentEvent, for Recorders that are AgentRecorders):
// a SubagentStart when SpawnAgent starts it inside a call, before its first
// call, and a SubagentStop when that call ends, before the call is
// recorded — so that a collector shows it started, stopped and under the
// call that spawned it, as it shows Claude Code's. An AuditRecorder writes those
// events and the call to the audit trail, so that a session's directory
// holds what `hookwatch export` writes (docs/audit.md); a Forwarder sends
// the same payloads to a hookwatch collector, where the session and its
// agent tree appear as Claude Code's do; Recorders hands each call to
// several.
//
// Every payload carries what Claude Code's carry of the session: its cwd
// (Executor.Dir, by default the process's working directory at the
// Executor's first call), from which the collector attributes the session
// to a project, and, when the program sets them, permission_mode and
// transcript_path (Executor.PermissionMode, TranscriptPath), which policy
// rules may read. Executor.EndSession ends a session: the Recorders record
// the SessionEnd event Claude Code sends at a session's end, and the
// collector shows the session ended as it shows Claude Code's. Nothing
// else ends one — closing the Forwarder does not.
//
// # Cost
//
// With hooks registered but none matching, a call costs two allocations
// (the Call, the tool's context) and well under a microsecond; which hooks
// apply to a tool is worked out once per tool name and phase. Recording a
// call costs more than running its hooks — the privacy rules, the hash
// chain and the write — a few microseconds a line; AuditOptions.NoEvents
// writes one line a call instead of three. See docs/benchmarks.md.
package toolhook
