package privacy

import (
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/redact"
)

// Envelope applies o's redaction to what an envelope carries beside its
// payload, in place, and reports whether it changed anything. Like the
// payload's, these fields come from the agent's machine or from whoever
// posts the envelope (a script, an older hook), and reach the store, the
// API and the audit trail:
//
//   - host, user, hookwatch_version, runtime, kind, fork_of, the subagent
//     sidecar's description: redacted as text (redact.String);
//   - decision: redacted as JSON (redact.JSON), its reasons above all,
//     which may quote the command or prompt they judge;
//   - traceparent: dropped when redaction would change it (a redacted one
//     is no trace context), as is a file state whose path or hash it would
//     change (the stale-context guard compares the path with the model's,
//     which names the file redacted, and stats it: a redacted path names no
//     file).
//
// What stays byte for byte, as the payload's ids do (see keep): the
// envelope id, the key that makes delivery idempotent (a redacted one
// would make two envelopes one, and fails store.ValidateID), and the
// sidecar's agentType and toolUseId, by which attribution finds the call
// that spawned a subagent and rules select an agent: the payload's
// agent_type and tool_use_id they must match are kept exact. host, user and
// fork_of are identities too, for lineage, but redaction is a function of
// the text, so that the events of one host or user still group together;
// and neither a machine's name nor a session id (a UUID) is anything the
// redactor matches.
//
// Nothing is written through a pointer the envelope shares: a changed
// sidecar or file list is a copy (the importer hands the same sidecar to
// every record of a transcript). Like Apply, Envelope is idempotent and
// never fails.
func Envelope(env *event.Envelope, o Options) (changed bool) {
	if !o.Redact {
		return false
	}
	text := func(s *string) {
		if *s == "" {
			return
		}
		if r, n := redact.String(*s); n > 0 {
			*s, changed = r, true
		}
	}
	switch env.Runtime {
	case event.RuntimeClaudeCode, event.RuntimeCodex, event.RuntimeGoSDK: // a constant holds no secret
	default:
		text(&env.Runtime)
	}
	switch env.Kind {
	case "", event.KindHook, event.KindStatusLine, event.KindRollout, event.KindTranscript:
	default:
		text(&env.Kind)
	}
	text(&env.Host)
	text(&env.User)
	text(&env.HookwatchVersion)
	text(&env.ForkOf)
	if m := env.Subagent; m != nil && m.Description != "" {
		if r, n := redact.String(m.Description); n > 0 {
			c := *m
			c.Description = r
			env.Subagent, changed = &c, true
		}
	}
	if env.Traceparent != "" {
		if _, n := redact.String(env.Traceparent); n > 0 {
			env.Traceparent, changed = "", true
		}
	}
	if files, ch := fileStates(env.Files); ch {
		env.Files, changed = files, true
	}
	if len(env.Decision) > 0 {
		if r, n := redact.JSON(env.Decision); n > 0 {
			env.Decision, changed = r, true
		}
	}
	return changed
}

// fileStates returns files without the states whose path or hash
// redaction would change, a new slice when it drops one.
func fileStates(files []event.FileState) ([]event.FileState, bool) {
	secret := func(f event.FileState) bool {
		if _, n := redact.String(f.Path); n > 0 {
			return true
		}
		_, n := redact.String(f.Hash)
		return n > 0
	}
	for i, f := range files {
		if !secret(f) {
			continue
		}
		kept := append(make([]event.FileState, 0, len(files)-1), files[:i]...)
		for _, f := range files[i+1:] {
			if !secret(f) {
				kept = append(kept, f)
			}
		}
		return kept, true
	}
	return files, false
}
