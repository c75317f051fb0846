package collector

import (
	"context"
	"errors"
	"net/http"
	"net/netip"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/policy"
	"github.com/hookwatch/hookwatch/spool"
)

// ClaudeHookConfig configures HandleClaudeHook.
type ClaudeHookConfig struct {
	// Home holds the user policy and the quota state, as for the hook.
	Home string
	// Policies answers the events; nil builds one for Home, whose rules on
	// signals read this server's model (Server.PolicySignals). Share one
	// between the handlers: it keeps the rules compiled.
	Policies *policy.Evaluator
	// Spool, when this server is attached to it (spool.Spool.Attach) and
	// drains it (Server.DrainSpool), takes the events of requests that no
	// user's token sent, as the spool takes the events of command hooks:
	// the answer then waits for one write(2) instead of a commit. nil, or
	// not attached: every event is committed before the answer.
	Spool *spool.Spool
}

// HandleClaudeHook returns the handler of POST /v1/hooks/claude: Claude
// Code's "type": "http" hooks post the raw payload there instead of running
// a process per event. The payload goes through the same ingest pipeline as
// in the hook — the policies' decision, the subagent sidecar, the privacy
// rules (Config.Privacy), an envelope stamped with this machine's host and
// user as the hook stamps it — and is stored; the response body is the
// hook's JSON answer (empty: no opinion). Claude Code cannot block on a
// status code, so a payload that is not a JSON object gets a 400 that the
// client treats as a non-blocking error, and a storage failure is logged
// without changing the answer: the decision matters more to the agent than
// the record.
//
// An answered event is durable: committed, or appended to the spool this
// server is attached to and drains (ClaudeHookConfig.Spool), which, like the
// store, keeps it through a crash of the collector; the next collector
// delivers it. The hand-off spares the client the wait for the commit; the
// event is stored a few milliseconds later. The events of a user's token
// are committed, since only the commit checks that they go into that
// user's sessions.
//
// The http hook runs in the collector, but its envelopes name the machine
// that sent it (hookHost): the one Claude Code names in
// claudecode.HostHeader, else this one for a request from loopback, else
// the sender's address. Their user is the token's, for a user's token;
// else this collector's.
func (s *Server) HandleClaudeHook(cfg ClaudeHookConfig) http.Handler {
	if cfg.Policies == nil {
		cfg.Policies = policy.NewEvaluator(cfg.Home)
		cfg.Policies.Signals = s.PolicySignals
	}
	pl := s.pipeline
	pl.Origin.Runtime = event.RuntimeClaudeCode
	pl.Decide = func(ctx context.Context, p *event.Payload, data []byte) func() (ingest.Verdict, error) {
		stdout, code, audit := cfg.Policies.Answer(ctx, p.CWD, "", data)
		return func() (ingest.Verdict, error) { return ingest.Verdict{Stdout: stdout, Code: code, Audit: audit}, nil }
	}
	pl.Deliver = func(ctx context.Context, env *event.Envelope) error {
		if sp := cfg.Spool; sp != nil && sp.Attached() {
			if p, ok := principalOf(ctx); !ok || p.User == "" {
				// Offer: a full spool leaves the event to the commit.
				if sp.Offer(env.AppendJSON(nil)) == nil {
					return nil
				}
			}
		}
		_, err := s.commit(ctx, []event.Envelope{*env}, nil) // admitted by the pipeline already
		return err
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
		run := pl
		run.Origin.Host = hookHost(r, pl.Origin.Host)
		run.Remote = !fromLoopback(r)
		if !run.Remote {
			// The transcript a compaction names is on this machine only when
			// the agent is: a remote payload's path names the server's files.
			run.ArchiveDir = s.cfg.ArchiveDir
			// Likewise the files a tool read or wrote, whose state the
			// stale-context guard compares at a resume.
			run.RecordFiles = !s.cfg.NoFileStates
		}
		out, err := run.Run(r.Context(), data)
		if errors.Is(err, ingest.ErrPayload) {
			writeError(w, http.StatusBadRequest, "the body must be one Claude Code hook payload (a JSON object): "+err.Error())
			return
		}
		if err != nil {
			// Answered 200 all the same: an http hook must never break the
			// agent. A write into another user's session, which
			// /v1/events answers 403, is counted, as a 200 hides it.
			// A failed commit the writer logged, once per outage.
			if errors.Is(err, ErrForbidden) {
				s.metrics.hookRefused.Inc()
			}
			if ce := (*commitError)(nil); !errors.As(err, &ce) {
				s.log.Error("cannot store an http hook event", "event", out.Payload.Name(), "session", out.Payload.SessionID, "err", err)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out.Verdict.Stdout)
	})
}

// hookHost names the machine that sent the http hook r: the host Claude
// Code sends in claudecode.HostHeader (from HOOKWATCH_HOST, where 'hookwatch
// install --mode http' asks it to), else local, this collector's, for a
// request from loopback, else the address it came from. A header that is
// no host name (empty, an unset variable left as "$HOOKWATCH_HOST", longer
// than a DNS name) is not taken.
func hookHost(r *http.Request, local string) string {
	if h := r.Header.Get(claudecode.HostHeader); validHostName(h) {
		return h
	}
	if fromLoopback(r) {
		return local
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap().String()
	}
	return r.RemoteAddr
}

// validHostName reports whether s can be a host name or address: 1 to 253
// letters, digits, '.', '-', '_' or ':'.
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_' || c == ':') {
			return false
		}
	}
	return true
}
