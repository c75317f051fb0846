package collector

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/policy"
	"github.com/hookwatch/hookwatch/spool"
)

// Defaults of Options.
const (
	// DefaultSpoolInterval is how often a collector looks for spooled
	// events besides the wake-ups on each write; a look at an empty spool
	// costs a few stat calls.
	DefaultSpoolInterval = time.Second
	// DefaultShutdownTimeout bounds how long Run waits for in-flight
	// requests once its context ends; whatever was accepted is committed
	// either way.
	DefaultShutdownTimeout = 10 * time.Second
)

// Options configures Start: a collector as `hookwatch serve` runs it, with
// the listener, the http hooks, the local spool and the hook socket around
// the Server.
type Options struct {
	// Config is the Server's. Start owns Config.Store from then on: Stop
	// closes it, and so does a Start that fails.
	Config
	// Addr is the TCP address to listen on; "127.0.0.1:0" picks a free
	// port (see Collector.Addr).
	Addr string
	// Home is hookwatch's data directory on this machine (HOOKWATCH_HOME):
	// the spool the collector attaches to and drains, the hook socket, and
	// the user policy and quota state of the hooks it answers.
	Home string
	// TLSCert and TLSKey, when set, are the PEM files of the certificate
	// and key the collector serves HTTPS with, instead of plain HTTP.
	TLSCert, TLSKey string
	// Assets, when set, is served at "GET /" without authentication (the
	// dashboard's static files).
	Assets http.Handler
	// SpoolInterval is the longest wait between two looks at the spool
	// (default DefaultSpoolInterval).
	SpoolInterval time.Duration
	// ShutdownTimeout bounds Run's wait for in-flight requests (default
	// DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// Rollouts, when its Dir is set, makes the collector follow Codex's
	// rollout files (Server.FollowRollouts), keeping their offsets in
	// Home's import-state.json unless its StatePath says otherwise.
	Rollouts RolloutOptions
	// Transcripts, when its Dir is set, makes the collector follow Claude
	// Code's transcripts (Server.FollowTranscripts), keeping their offsets
	// in Home's import-state.json unless its StatePath says otherwise.
	Transcripts TranscriptOptions
}

// Collector is a running collector: a Server listening on Options.Addr,
// attached to the spool of Options.Home and answering its hook socket.
// Create it with Start and stop it with Stop.
type Collector struct {
	srv    *Server
	ln     net.Listener
	scheme string // "https" when it serves TLS, else "http"

	served   chan struct{} // closed when Serve returns
	serveErr error         // Serve's result, set before served closes

	stopDrain context.CancelFunc
	drained   chan struct{}  // closed when the drainer returns
	followed  sync.WaitGroup // the rollout and transcript followers
	release   func()         // closes the hook socket, then detaches from the spool

	stopOnce sync.Once
	stopErr  error
}

// Start brings a collector up, each part after the ones it needs: the
// Server (with the http hooks and the assets), the listener, the spool
// drainer, then — attached to the spool, so that hooks on this machine hand
// their events over through it instead of a request each — the hook socket;
// only then does it serve requests, so that a client that finds it healthy
// finds this home's hooks answered by it too (until then a connection waits
// in the listener's backlog). Stop takes them down in the reverse order. A
// part that cannot start makes Start fail only for the listener; without
// the spool or the socket the collector still serves, hooks post instead,
// and a warning is logged.
func Start(o Options) (*Collector, error) {
	if o.Home == "" {
		if o.Store != nil {
			o.Store.Close()
		}
		return nil, errors.New("collector.Start: no home")
	}
	if o.SpoolInterval <= 0 {
		o.SpoolInterval = DefaultSpoolInterval
	}
	if o.ArchiveDir == "" {
		o.ArchiveDir = filepath.Join(o.Home, "archive") // where this machine's hooks archive
	}
	srv, err := New(o.Config)
	if err != nil {
		if o.Store != nil {
			o.Store.Close()
		}
		return nil, err
	}
	log := srv.log
	// The spool of this machine's hooks; attached below, it also takes the
	// events of the http hooks.
	sp, spoolErr := spool.Open(filepath.Join(o.Home, "spool"), spool.Options{})
	// One evaluator answers the http hooks and the hook socket; its rules
	// on signals read this server's model.
	hooks := ClaudeHookConfig{Home: o.Home, Policies: policy.NewEvaluator(o.Home), Spool: sp}
	hooks.Policies.Signals = srv.PolicySignals
	hooks.Policies.OnProblems = func(problems []policy.Problem) {
		for _, p := range problems {
			log.Warn("invalid policy left out (fail-open): fix it and run hookwatch policy check", "problem", p.Error())
		}
	}
	srv.Handle("POST /v1/hooks/claude", srv.HandleClaudeHook(hooks))
	if o.Assets != nil {
		srv.HandleAssets("GET /", o.Assets)
	}
	var tlsConfig *tls.Config
	if o.TLSCert != "" || o.TLSKey != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			srv.Shutdown(context.Background())
			return nil, fmt.Errorf("cannot load the TLS certificate: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		srv.Shutdown(context.Background())
		return nil, fmt.Errorf("cannot listen on %s: %w", o.Addr, err)
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	c := &Collector{srv: srv, ln: ln, scheme: scheme, served: make(chan struct{}), drained: make(chan struct{}), release: func() {}}
	// Served last, on every return from here: a hook that ran between a
	// healthy answer and the socket would have found no collector to ask
	// its policy and answered nothing.
	defer func() {
		go func() {
			c.serveErr = srv.Serve(ln)
			close(c.served)
		}()
	}()

	// Deliver what hooks on this machine spooled while no collector ran.
	drainCtx, stopDrain := context.WithCancel(context.Background())
	c.stopDrain = stopDrain
	if o.Rollouts.Dir != "" {
		if o.Rollouts.StatePath == "" {
			o.Rollouts.StatePath = filepath.Join(o.Home, importer.StateFile) // hookwatch import's
		}
		c.followed.Add(1)
		go func() { defer c.followed.Done(); srv.FollowRollouts(drainCtx, o.Rollouts) }()
	}
	if o.Transcripts.Dir != "" {
		if o.Transcripts.StatePath == "" {
			o.Transcripts.StatePath = filepath.Join(o.Home, importer.StateFile) // hookwatch import's
		}
		c.followed.Add(1)
		go func() { defer c.followed.Done(); srv.FollowTranscripts(drainCtx, o.Transcripts) }()
	}
	if spoolErr != nil {
		log.Warn("cannot open the local spool; spooled events wait for the next hook", "err", spoolErr)
		close(c.drained)
		return c, nil
	}
	// /healthz names the spool from the moment Start returns, not from
	// when the drainer's goroutine first runs: install and doctor tell
	// another home's collector by it.
	srv.metrics.spool.Store(sp)
	go func() { defer close(c.drained); srv.DrainSpool(drainCtx, sp, o.SpoolInterval) }()
	detach, err := sp.Attach(ln.Addr().String())
	if err != nil {
		log.Warn("not attached to the local spool; hooks will post each event", "err", err)
		return c, nil
	}
	c.release = detach
	// Attached, it also answers this home's hooks when policies are in
	// force. The socket goes before the spool is released, so a successor
	// never has its socket removed.
	beforeSocket()
	sock, err := hooksock.Listen(hooksock.Path(o.Home))
	if err != nil {
		log.Warn("hooks will answer policies without the collector, one process per event", "err", err)
		return c, nil
	}
	sock.Serve(AnswerHooks(hooks.Policies, ln.Addr().String()), func(err error) { log.Warn(err.Error()) })
	c.release = func() { sock.Close(); detach() }
	return c, nil
}

// beforeSocket is called by Start once attached to the spool, before the
// hook socket listens: where a test holds Start.
var beforeSocket = func() {}

// Server returns the collector's Server.
func (c *Collector) Server() *Server { return c.srv }

// Addr returns the address the collector listens on.
func (c *Collector) Addr() net.Addr { return c.ln.Addr() }

// URL returns the collector's base URL: https://<Addr> when it serves TLS,
// else http://<Addr>.
func (c *Collector) URL() string { return c.scheme + "://" + c.ln.Addr().String() }

// Stop takes the collector down in the reverse order of Start: it closes the
// hook socket and detaches from the spool first, so that hooks post (or
// spool for the next collector) instead of handing events to a drainer that
// is stopping; then stops the drainer; then shuts the Server down
// (Server.Shutdown: in-flight requests, the writer, the store), bounded by
// ctx. Later calls return the first call's result.
func (c *Collector) Stop(ctx context.Context) error {
	c.stopOnce.Do(func() {
		c.release()
		c.stopDrain()
		<-c.drained
		c.followed.Wait()
		c.stopErr = c.srv.Shutdown(ctx)
		<-c.served
	})
	return c.stopErr
}

// Run starts a collector with o, calls ready (when not nil) once it
// listens, and serves until ctx ends, then stops it within
// o.ShutdownTimeout. It returns nil after a clean stop, and an error when
// the collector cannot start, stops serving on its own, or cannot finish in
// time.
func Run(ctx context.Context, o Options, ready func(*Collector)) error {
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	c, err := Start(o)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(c)
	}
	select {
	case <-c.served:
		c.Stop(context.Background())
		return fmt.Errorf("cannot serve: %w", c.serveErr)
	case <-ctx.Done():
	}
	// Said before the wait, which may take the whole timeout: an operator
	// who stopped the collector (SIGTERM, Ctrl-C) sees it was heard.
	c.srv.log.Info("shutting down: finishing the requests in flight and the commits", "within", o.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
	defer cancel()
	if err := c.Stop(sctx); err != nil {
		return fmt.Errorf("unclean shutdown: %w", err)
	}
	return nil
}
