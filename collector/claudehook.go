package collector

import (
	"encoding/json"
	"net/http"
	"os"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/policy"
	"github.com/hookwatch/hookwatch/privacy"
)

// ClaudeHookConfig configures HandleClaudeHook.
type ClaudeHookConfig struct {
	// Home holds the user policy and the quota state, as for the hook.
	Home string
	// Policies answers the events; nil builds one for Home. Share one
	// between the handlers: it keeps the rules compiled.
	Policies *policy.Evaluator
	// Privacy are the edge rules applied before storage.
	Privacy privacy.Options
	// Version is recorded in the envelopes.
	Version string
}

// HandleClaudeHook returns the handler of POST /v1/hooks/claude: Claude
// Code's "type": "http" hooks post the raw payload there instead of running
// a process per event. It does what the hook does — answer with the
// policies' decision, read the subagent sidecar, apply the privacy rules,
// store the event — and its response body is the hook's JSON answer (empty:
// no opinion). Claude Code cannot block on a status code, so a payload that
// is not a JSON object gets a 400 that the client treats as a non-blocking
// error, and a storage failure is logged without changing the answer: the
// decision matters more to the agent than the record.
func (s *Server) HandleClaudeHook(cfg ClaudeHookConfig) http.Handler {
	if cfg.Policies == nil {
		cfg.Policies = policy.NewEvaluator(cfg.Home)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := s.openBody(w, r)
		if body == nil {
			return
		}
		defer body.Close()
		// One payload, read whole: the policies take its bytes as sent.
		// The in-flight budget counts it all the same.
		data, _ := body.readAll(r.ContentLength)
		if s.readFailed(w, body) {
			return
		}
		p, err := event.Decode(data)
		if err != nil {
			writeError(w, http.StatusBadRequest, "the body must be one Claude Code hook payload (a JSON object): "+err.Error())
			return
		}
		now := time.Now()
		answer, _, audit := cfg.Policies.Answer(r.Context(), p.CWD, "", data)
		privacy.Apply(p.Raw, cfg.Privacy)
		env := event.Envelope{
			ID:               event.NewID(now),
			Runtime:          event.RuntimeClaudeCode,
			Kind:             event.KindHook,
			ReceivedAt:       now.UTC(),
			Host:             hostname(),
			HookwatchVersion: cfg.Version,
			Subagent:         hook.ReadSubagentMeta(p),
			Decision:         audit,
		}
		if env.Payload, err = json.Marshal(p.Raw); err == nil {
			if _, err = s.Ingest(r.Context(), []event.Envelope{env}); err != nil {
				s.log.Error("cannot store an http hook event", "event", p.Name(), "session", p.SessionID, "err", err)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(answer)
	})
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
