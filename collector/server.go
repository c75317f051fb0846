// Package collector is hookwatch's HTTP server: it ingests envelopes from
// hooks (POST /v1/events), answers the query API, streams new events to the
// dashboard (Server-Sent Events) and exports its metrics.
//
// Every write goes through one writer goroutine that groups the batches of
// requests arriving together into one store transaction (group commit): on a
// single SQLite writer that is what turns many small hook requests into few
// commits, and it gives every request a simple promise — its reply is sent
// only after its events are committed.
//
// The session model (agents, tool calls, lineage, status, counts), which
// package attribution computes, is kept in the store as rows and brought up
// to date after each commit, event by event; model.go says how, and what a
// read sees meanwhile.
package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/store"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes    = 32 << 20
	DefaultMaxInflight     = 2 * DefaultMaxBodyBytes
	DefaultMaxCommitEvents = 20_000
	DefaultHeartbeat       = 15 * time.Second
)

// ErrClosed is returned by Ingest once Shutdown has begun.
var ErrClosed = errors.New("collector is shut down")

// Config configures a Server.
type Config struct {
	// Store receives the events; the Server closes it on Shutdown.
	Store store.Store
	// Version is reported by /healthz.
	Version string
	// Token, when not empty, is required as "Authorization: Bearer <token>"
	// on every endpoint except /healthz, unless a token the store keeps
	// (store.TokenStore) is presented instead: Token is the admin token,
	// whose requests see everything and whose events keep the user their
	// envelope names. See auth.go.
	Token string
	// RequireAuth requires a token even when Token is empty: the store's
	// tokens are then the only way in. A collector with neither is open.
	RequireAuth bool
	// Logger receives request and commit errors; nil discards them.
	Logger *slog.Logger
	// MaxBodyBytes caps a request body, after gzip decompression
	// (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxInflightBytes caps the request-body bytes read or held by all
	// requests at once; a request beyond it is answered 503 with
	// Retry-After (default DefaultMaxInflight; never less than
	// MaxBodyBytes). See body.go.
	MaxInflightBytes int64
	// MaxCommitEvents caps the events one group commit gathers from
	// several requests; a single larger request still commits alone, whole
	// (default DefaultMaxCommitEvents).
	MaxCommitEvents int
	// Heartbeat is the interval of SSE comment lines that keep idle
	// streams open through proxies (default DefaultHeartbeat).
	Heartbeat time.Duration
	// StreamStall is how long a stream waits for its client to take a
	// write before disconnecting it (default DefaultStreamStall).
	StreamStall time.Duration
	// DeriveWait bounds how long a read of a session's model waits for
	// committed events of it not applied yet (default DefaultDeriveWait).
	DeriveWait time.Duration
	// ModelCacheBytes bounds the memory, as attribution.Group.Size
	// estimates it, of the session model's lineage groups kept between
	// rounds; an idle group is dropped and loaded again from the store
	// when it has events, the groups at hand being kept up to 16 times it
	// (default DefaultModelCacheBytes; see groupCache).
	ModelCacheBytes int
	// Retain, when not 0, is how long a session is kept after its latest
	// event; RetainBytes, when not 0, caps the bytes the store's data
	// takes (a store.Sizer), beyond which the least recently active
	// sessions go. Both prune in the background (retention.go).
	Retain      time.Duration
	RetainBytes int64
	// Privacy are the rules applied to every envelope stored, whichever
	// way it came; the zero value means privacy.DefaultOptions.
	Privacy privacy.Options
	// NoAgentMetrics leaves out the metrics per agent (tool calls, their
	// durations, prompts, subagents, denials, active sessions and agents:
	// docs/metrics.md), which cost a little on every model round; for
	// measuring that cost.
	NoAgentMetrics bool
	// AuditDir, when not empty, is the directory of the continuous audit
	// trail (package audit), written as the model applies committed
	// events; see audit.go.
	AuditDir string
	// ArchiveDir is the compaction archive of this machine's hooks
	// (ingest.Pipeline.ArchiveDir), served per session by GET
	// /v1/sessions/{id}/archives and written by the http hooks of agents
	// on this machine (loopback requests); "" serves none.
	ArchiveDir string
	// NoFileStates keeps the http hooks of agents on this machine from
	// recording the state of the files their tools read and write
	// (ingest.Pipeline.RecordFiles), which the stale-context guard checks
	// at a resume: HOOKWATCH_STALE_GUARD=0.
	NoFileStates bool
	// AuditMaxFileBytes is the size past which an audit file is rotated
	// (default audit.DefaultMaxFileBytes).
	AuditMaxFileBytes int64
	// AuditRetain, when not 0, is how long the audit trail keeps a file
	// after its last write: older ones are deleted in the background
	// (audit.Writer.Prune). 0 keeps the trail: it is evidence, deleted
	// only when asked.
	AuditRetain time.Duration
	// ModelSinks receive the session model's changes as they are stored
	// (the OTLP trace exporter); Shutdown stops them after the model's
	// last change, within its context.
	ModelSinks []ModelSink
	// MetricSets are served on /metrics after the collector's own (the
	// sinks' counters).
	MetricSets []*metrics.Set
	// Signals are the thresholds of the signals of agents going wrong
	// (attribution.Signals): the default of GET /v1/sessions/{id}/signals
	// and what policies on session.signals and agent.signals see. Zero
	// fields take attribution.DefaultThresholds'.
	Signals attribution.Thresholds
	// Now is the clock of the signals that depend on it (a stalled
	// session: signals_api.go, stall.go); nil is time.Now. For tests.
	Now func() time.Time
	// StallSweep is how often the collector looks for sessions that
	// stalled, to count them and tell the live stream (stall.go); 0 is a
	// tenth of Signals.StalledAfter, between 1 s and 30 s.
	StallSweep time.Duration
}

// Server is the collector. Create it with New; serve it with Serve or mount
// Handler in your own http.Server; stop it with Shutdown.
type Server struct {
	cfg   Config
	store store.Store
	// tokens are the store's access tokens, nil when it keeps none.
	tokens store.TokenStore
	// authOn latches that the store keeps tokens, seen after New;
	// tokensChecked is when it was last looked for (UnixNano). See
	// requireAuth.
	authOn        atomic.Bool
	tokensChecked atomic.Int64
	// tokensDown tells of the store failing the token checks (auth.go).
	tokensDown outage
	log        *slog.Logger
	mux        *http.ServeMux
	// assetsPattern is HandleAssets' route, which takes every GET no
	// other route takes; "" without one.
	assetsPattern string
	handler       http.Handler
	metrics       *serverMetrics
	hub           *hub
	writer        *writer
	modeler       *modeler
	// stalls are the sessions waiting on calls, swept for stalls.
	stalls *stalls
	// stopBackground ends the goroutines that follow the other collectors
	// on a shared store (shared.go) and prune (retention.go); background
	// waits for them.
	stopBackground context.CancelFunc
	background     sync.WaitGroup
	auditor        *auditor // nil without Config.AuditDir
	// importState is held around each use of the import state's lock by
	// this collector's followers (a look of the transcripts, one of the
	// rollouts): that lock is taken without waiting, and one
	// follower taking it while the other holds it would read as an import
	// running.
	importState sync.Mutex
	// inflight counts the request-body bytes held across requests.
	inflight *inflight
	// streamReads bounds the streams holding a page of events at once.
	streamReads streamReads
	// pipeline makes the envelopes of http hooks and admits every other.
	pipeline ingest.Pipeline
	// spoolFlush reaches the spool's drainer while one runs (DrainSpool).
	spoolFlush atomic.Pointer[spoolFlush]

	// done is closed when Shutdown begins; long-lived handlers (SSE) end.
	done chan struct{}

	mu       sync.Mutex
	httpSrv  *http.Server
	shutOnce sync.Once
	shutErr  error
}

// New returns a Server on cfg.Store and starts its writer goroutine.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("collector.New: no store")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxInflightBytes <= 0 {
		cfg.MaxInflightBytes = DefaultMaxInflight
	}
	// A body the collector accepts must fit in the budget alone.
	cfg.MaxInflightBytes = max(cfg.MaxInflightBytes, cfg.MaxBodyBytes)
	if cfg.MaxCommitEvents <= 0 {
		cfg.MaxCommitEvents = DefaultMaxCommitEvents
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.StreamStall <= 0 {
		cfg.StreamStall = DefaultStreamStall
	}
	cfg.Signals = cfg.Signals.OrDefault()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StallSweep <= 0 {
		cfg.StallSweep = min(max(cfg.Signals.StalledAfter/10, time.Second), 30*time.Second)
	}
	if cfg.DeriveWait <= 0 {
		cfg.DeriveWait = DefaultDeriveWait
	}
	if cfg.ModelCacheBytes <= 0 {
		cfg.ModelCacheBytes = DefaultModelCacheBytes
	}
	if cfg.Privacy == (privacy.Options{}) {
		cfg.Privacy = privacy.DefaultOptions()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:        cfg,
		store:      cfg.Store,
		tokens:     tokenStore(cfg.Store),
		log:        log,
		tokensDown: outage{text: &tokenOutage},
		mux:        http.NewServeMux(),
		metrics:    newMetrics(),
		hub:        newHub(),
		done:       make(chan struct{}),
		pipeline:   ingest.Pipeline{Origin: ingest.LocalOrigin(cfg.Version), Privacy: cfg.Privacy},
	}
	s.inflight = &inflight{max: cfg.MaxInflightBytes}
	s.streamReads = newStreamReads()
	if cfg.AuditDir != "" {
		a, err := newAuditor(cfg.AuditDir, cfg.AuditMaxFileBytes, log, s.metrics.set)
		if err != nil {
			return nil, fmt.Errorf("collector.New: %w", err)
		}
		s.auditor = a
	}
	s.stalls = newStalls()
	s.modeler = newModeler(s.store, log, s.hub, s.metrics.set, cfg.DeriveWait, cfg.ModelCacheBytes, !cfg.NoAgentMetrics, s.auditor, cfg.ModelSinks, cfg.Signals, s.stalls)
	s.writer = newWriter(modelingStore{s.store, s.modeler}, cfg.MaxCommitEvents, s.metrics, s.hub, log)
	ctx, cancel := context.WithCancel(context.Background())
	s.stopBackground = cancel
	if sh, ok := s.store.(store.Shared); ok {
		s.background.Go(func() { s.watch(ctx, sh) })
	}
	s.background.Go(func() { s.sweepStalls(ctx) })
	if s.auditor != nil && cfg.AuditRetain > 0 {
		m := newAuditPruneMetrics(s.metrics.set)
		s.background.Go(func() { s.pruneAudit(ctx, m) })
	}
	if r, ok := s.store.(store.Retention); ok && (cfg.Retain > 0 || cfg.RetainBytes > 0) {
		s.background.Go(func() { s.retain(ctx, r) })
	}
	s.routes()
	s.handler = s.instrument(s.jsonUnmatched())
	return s, nil
}

// jsonUnmatched answers a request under /v1/ that no route takes — 404, or
// 405 for a path whose routes are of other methods, with those methods —
// with the API's JSON error body, as every endpoint answers its own
// errors, instead of net/http's text. The dashboard's files take every
// other GET (HandleAssets), so the mux alone would answer a GET of a POST
// endpoint 404 and the others 405 naming GET: the methods are asked of
// the API's routes only.
func (s *Server) jsonUnmatched() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") {
			s.mux.ServeHTTP(w, r)
			return
		}
		if _, pattern := s.mux.Handler(r); pattern != "" && pattern != s.assetsPattern {
			s.mux.ServeHTTP(w, r)
			return
		}
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != s.assetsPattern {
				allow = append(allow, m)
			}
		}
		if len(allow) == 0 {
			writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s does not take %s (it takes %s)", r.URL.Path, r.Method, strings.Join(allow, ", ")))
	})
}

// routes registers the built-in endpoints. Endpoints added later (the
// policy engine's POST /v1/hooks/claude) use Handle, and Ingest for storage.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.Handle("POST /v1/events", http.HandlerFunc(s.handleEvents))
	// Each read endpoint names the parameters it takes (takes): any
	// other is refused rather than ignored.
	s.Handle("GET /v1/sessions", takes(s.handleSessions, "runtime", "project", "limit", "cursor"))
	s.Handle("GET /v1/sessions/{id}", takes(s.handleSessionView))
	s.Handle("GET /v1/sessions/{id}/events", takes(s.handleSessionEvents, "agent_id", "event", "tool", "copies", "limit", "cursor"))
	s.Handle("GET /v1/sessions/{id}/agents", takes(s.handleAgents, "limit", "cursor"))
	s.Handle("GET /v1/sessions/{id}/tool-calls", takes(s.handleToolCalls, "agent_id", "tool", "status", "subtype", "effect", "since", "limit", "cursor"))
	s.Handle("GET /v1/sessions/{id}/signals", takes(s.handleSignals, signalQuery...))
	s.Handle("GET /v1/sessions/{id}/archives", takes(s.handleArchives))
	s.Handle("GET /v1/sessions/{id}/files", takes(s.handleFiles))
	s.Handle("GET /v1/sessions/{id}/compare/{other}", takes(s.handleCompare, "unrelated"))
	s.Handle("GET /v1/stream", takes(s.handleStream, "session_id", "events"))
	s.Handle("GET /metrics", adminOnly(s.handleMetrics))
}

// Handle registers an additional endpoint (a net/http pattern such as
// "POST /v1/hooks/claude") behind the same authentication, metrics and
// panic recovery as the built-in ones. Call it before serving.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, s.authenticate(h))
}

// HandleAssets registers static files that carry no data — the
// dashboard's page, scripts and styles — without authentication, so that a
// browser can load the page that then asks for the token. Every /v1 data
// endpoint stays behind Handle's authentication.
func (s *Server) HandleAssets(pattern string, h http.Handler) {
	s.assetsPattern = pattern
	s.mux.Handle(pattern, h)
}

// Handler returns the HTTP handler of every endpoint.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve accepts connections on l until Shutdown. It returns nil after a
// Shutdown, like a clean exit.
func (s *Server) Serve(l net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout/WriteTimeout: a 32 MiB batch on a slow link and a
		// day-long SSE stream are both legitimate. Idle keep-alive
		// connections are reaped instead.
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return ErrClosed
	default:
	}
	s.httpSrv = srv
	s.mu.Unlock()
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the server gracefully: it stops accepting connections, ends
// the SSE streams, waits for in-flight requests — each of which waits for
// its commit — commits whatever the writer still holds, and closes the
// store. When ctx ends first it closes the remaining connections, still
// commits what was queued, and returns ctx's error. Later calls return the
// first call's result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() {
		s.mu.Lock()
		close(s.done)
		srv := s.httpSrv
		s.mu.Unlock()

		var errs []error
		if srv != nil {
			if err := srv.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("cannot finish in-flight requests: %w", err))
				srv.Close()
			}
		}
		s.writer.stop()
		s.stopBackground()
		s.background.Wait()
		s.modeler.stop()
		if err := s.auditor.stop(); err != nil {
			errs = append(errs, fmt.Errorf("cannot close the audit trail: %w", err))
		}
		for _, sink := range s.cfg.ModelSinks {
			sink.Stop(ctx)
		}
		if err := s.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("cannot close the store: %w", err))
		}
		s.shutErr = errors.Join(errs...)
	})
	return s.shutErr
}
