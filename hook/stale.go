package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/stale"
)

// maxFilesReply bounds the collector's list of a session's files.
const maxFilesReply = 1 << 20

// guardStale is the stale-context guard (package stale) at a
// SessionStart(resume|compact|fork): it asks the collector for the files the
// session's lineage read or wrote and the state recorded of each, checks
// them on this machine, and returns the answer to print — the policies'
// (out.Verdict) with the guard's context merged in through package
// decision. Any failure leaves the policies' answer as it was, with the
// reason.
func (cfg Config) guardStale(out ingest.Outcome, deadline time.Time) ([]byte, int, error) {
	stdout, code := out.Verdict.Stdout, out.Verdict.Code
	p := out.Payload
	ss, ok := p.Event.(*event.SessionStartInput)
	if !ok || cfg.Stale.Off || out.Verdict.Recorded || out.Envelope == nil || !stale.Guarded(ss.Source) || code != 0 {
		// Off, another event, or the full binary answered: it guarded.
		return stdout, code, nil
	}
	id := p.SessionID
	if ss.Source == "fork" && out.Envelope != nil && out.Envelope.ForkOf != "" {
		// A fork under a new id (clients from 2.1.332) starts from its
		// parent's context: the files are the parent's, when the pipeline
		// found it from the fork's transcript (Envelope.ForkOf). Else the
		// id asked for is the event's: the parent's where a client
		// reports the fork under it, one the collector does not know yet
		// (nothing to say) where it is new.
		id = out.Envelope.ForkOf
	}
	if !safeID(id) {
		return stdout, code, fmt.Errorf("stale-context guard: unsafe session id %q", id)
	}
	ep, err := parseEndpoint(cfg.URL)
	if errors.Is(err, errUnsupportedURL) {
		// A collector the hook reaches only through a forwarder (https,
		// a host name): the guard cannot ask it, and says nothing.
		return stdout, code, nil
	}
	if err != nil {
		return stdout, code, fmt.Errorf("stale-context guard: %w", err)
	}
	end := deadline.Add(-cfg.budget() / 10)
	status, body, err := get(ep, "/v1/sessions/"+id+"/files", cfg.Token, maxFilesReply, end)
	switch {
	case err != nil:
		return stdout, code, fmt.Errorf("stale-context guard: %w", err)
	case status == 404:
		return stdout, code, nil // a session the collector never saw: nothing recorded
	case status != 200:
		return stdout, code, fmt.Errorf("stale-context guard: %w", StatusError{status})
	}
	var list struct {
		Files []stale.Recorded `json:"files"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return stdout, code, fmt.Errorf("stale-context guard: cannot read the collector's list: %w", err)
	}
	runtime := out.Envelope.Runtime // the pipeline's: forced by the config, or detected
	guard := cfg.Stale.Decide(runtime, stale.Check(list.Files, end))
	if guard.IsZero() {
		return stdout, code, nil
	}
	policies, err := decision.Parse(event.SessionStart, runtime, stdout)
	if err != nil {
		return stdout, code, fmt.Errorf("stale-context guard: %w", err)
	}
	merged, code := decision.Render(decision.Merge(policies, guard))
	return merged, code, nil
}

// safeID reports whether a session id can go into a URL path as it is:
// Claude Code's and Codex's are UUIDs.
func safeID(id string) bool {
	if id == "" || len(id) > 200 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return id != "." && id != ".."
}
