// Package forward delivers this machine's spooled envelopes to a collector
// the lean hook cannot reach itself: one behind an https:// URL or a host
// name. The hook does not link Go's network and TLS stack (it would cost
// every hook, the local ones included, more than a millisecond), so for
// such a URL it appends each envelope to its home's spool, and a forwarder
// attached to that spool, as a local collector attaches, posts them over
// HTTPS with the hook's token. It drains the spool with the collector's own
// loop (spool.Follow: the active segment followed in place): in batches,
// retried with backoff while the collector cannot take them, each segment
// deleted only once the collector acknowledged all of it. The collector stores an envelope id once, so a
// forwarder killed mid-batch and started again loses nothing and stores
// nothing twice.
package forward

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/spool"
)

// Defaults of a Forwarder.
const (
	// DefaultInterval is how often the spool is looked at without a wake-up.
	DefaultInterval = 2 * time.Second
	// maxBackoff bounds the wait between attempts while the collector
	// cannot take a batch.
	maxBackoff = time.Minute
	minBackoff = 250 * time.Millisecond
	// tokenPoll is how often, after the collector refused the token, the
	// forwarder looks for a new one: a token installed meanwhile is sent
	// at once, not after the backoff (up to maxBackoff).
	tokenPoll = time.Second
	// maxBodyBytes caps one POST, below the collector's default cap on a
	// body (32 MiB): a batch of records past it is sent in several.
	maxBodyBytes = 8 << 20
	// DefaultArchiveRetain is the age past which a forwarder deletes a
	// session's compaction archive (Options.ArchiveRetain): 30 days, as
	// long as Claude Code keeps the transcripts the archive copies
	// (cleanupPeriodDays' default). No collector reads a forwarder's home:
	// without it, every laptop of a team would keep its copies forever.
	DefaultArchiveRetain = 30 * 24 * time.Hour
)

// archivePruneEvery is how often a forwarder looks for a compaction
// archive past its age, after the look at its start: a variable for the
// tests.
var archivePruneEvery = time.Hour

// Options configures Run.
type Options struct {
	// Home is the hookwatch home whose spool is drained ($HOOKWATCH_HOME);
	// envelopes the collector refuses go to Home/rejected.jsonl.
	Home string
	// URL is the collector's base URL, as HOOKWATCH_URL names it.
	URL string
	// Token returns the token to send as "Authorization: Bearer" ("" sends
	// none) and where it comes from (hook.LookupToken), which words the
	// error when the collector refuses it (hook.RefusedToken). It is asked
	// before each POST, so that a token file replaced while the forwarder
	// runs ('hookwatch install --token-file', after an admin revoked the
	// old token) is sent from the next POST on, without a restart: reading
	// a small file costs nothing beside the POST. nil sends none.
	Token func() (string, hook.TokenSource)
	// Client posts the batches; nil is NewClient("").
	Client *http.Client
	// Interval is how often the spool is looked at without a wake-up
	// (DefaultInterval if zero).
	Interval time.Duration
	// Logger receives what was delivered and why a delivery failed.
	Logger *slog.Logger
	// Ready, when set, is called once the forwarder is attached.
	Ready func()
	// MinBackoff and MaxBackoff bound the wait between attempts while the
	// collector cannot take a batch: MinBackoff, doubling up to MaxBackoff
	// (250 ms and a minute if zero). A refused token that Token replaces
	// meanwhile cuts the wait short.
	MinBackoff, MaxBackoff time.Duration
	// ArchiveRetain is the age past which the compaction archive of a
	// session (Home/archive/<session>, which this machine's hooks write
	// and no collector reads here) is deleted: the archive of every
	// session whose files were all last written longer ago, looked for
	// at the start and hourly while the forwarder runs, in the
	// background, each pass logged when it deleted anything. 0 keeps the
	// archive whole; 'hookwatch forward' passes DefaultArchiveRetain
	// unless told otherwise.
	ArchiveRetain time.Duration
}

// CAFileName is the file in the hookwatch home that 'hookwatch install
// --ca-file' copies a team's certificate authority to.
const CAFileName = "ca.pem"

// CAFile returns the certificates a forwarder trusts besides the system's:
// HOOKWATCH_CA_FILE, else home's CAFileName when it exists, else "".
func CAFile(getenv func(string) string, home string) string {
	if f := getenv("HOOKWATCH_CA_FILE"); f != "" {
		return f
	}
	if f := filepath.Join(home, CAFileName); fileExists(f) {
		return f
	}
	return ""
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// NewClient returns the client a forwarder posts with: TLS 1.2 or later,
// verified against the system's roots plus the PEM certificates of caFile
// when it is not "" (HOOKWATCH_CA_FILE: a team's own certificate
// authority). Verification is never turned off.
func NewClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read the CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("cannot use the CA file %s: no PEM certificate in it", caFile)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, nil
}

// Run attaches to the spool of o.Home as its consumer, under the address
// hook.ForwarderAddr(o.URL) that hooks look for, and forwards what is
// spooled until ctx ends. It returns spool.ErrAttached (wrapped) when
// another consumer — a local collector, another forwarder — is attached.
func Run(ctx context.Context, o Options) error {
	if err := hook.CheckURL(o.URL); err != nil {
		return fmt.Errorf("cannot forward: %w", err)
	}
	if o.Client == nil {
		c, err := NewClient("")
		if err != nil {
			return err
		}
		o.Client = c
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = minBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = maxBackoff
	}
	sp, err := spool.Open(filepath.Join(o.Home, "spool"), spool.Options{})
	if err != nil {
		return err
	}
	release, err := sp.Attach(hook.ForwarderAddr(o.URL))
	if err != nil {
		return fmt.Errorf("cannot forward %s: %w", sp.Dir(), err)
	}
	defer release()
	if o.Ready != nil {
		o.Ready()
	}
	f := &forwarder{o: o, base: strings.TrimRight(o.URL, "/")}
	f.shown = hook.ShownURL(f.base)
	flush := make(chan chan struct{}, 1)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go f.watchToken(watchCtx, flush)
	if o.ArchiveRetain > 0 {
		// Attached: one forwarder per home prunes, never beside a
		// collector, whose own retention asks its store first. Run
		// returns once the pass under way is done.
		pruned := make(chan struct{})
		go func() {
			defer close(pruned)
			pruneArchive(watchCtx, filepath.Join(o.Home, "archive"), o.ArchiveRetain, o.Logger)
		}()
		defer func() { stopWatch(); <-pruned }()
	}
	failed := 0 // attempts failed in a row; Passed is called by one goroutine
	err = sp.Follow(ctx, spool.FollowOptions{
		Interval:   o.Interval,
		Coalesce:   spool.DefaultCoalesce, // a turn's hooks share one POST
		Batch:      spool.DefaultBatch,
		MinBackoff: o.MinBackoff,
		MaxBackoff: o.MaxBackoff,
		Flush:      flush,
		Passed: func(n int, err error, retryIn time.Duration) {
			if err != nil {
				failed++
				o.Logger.Warn("cannot forward the spool; retrying", "url", f.shown, "in", retryIn, "err", err)
				return
			}
			if failed > 0 {
				// Said once: a log whose last lines are failures reads as a
				// forwarder that still fails.
				o.Logger.Info("forwarding again: the collector took the events that waited", "url", f.shown, "failed_attempts", failed)
				failed = 0
			}
			// Debug: a line per drain would grow forward.log with every hook.
			o.Logger.Debug("forwarded spooled events", "events", n, "url", f.shown)
		},
	}, func(recs [][]byte) error {
		return hook.SendSpooled(recs, func(recs [][]byte, refuse func([]byte, error)) error {
			return f.send(ctx, recs, refuse)
		}, func(rec []byte, refusal error) {
			o.Logger.Warn("the collector refused a spooled event", "err", hook.Reject(o.Home, [][]byte{rec}, refusal))
		})
	})
	if err != nil {
		// Not lost: the next consumer delivers the active segment again.
		o.Logger.Warn("cannot settle the spool", "dir", sp.Dir(), "err", err)
	}
	return nil
}

type forwarder struct {
	o    Options
	base string
	// shown is base as the log shows it: without its user info, which
	// may hold a password.
	shown string
	// sent is the token of the last POST, so that a new one is logged once
	// (Follow calls deliver from one goroutine).
	sent    string
	sentAny bool
	// refused is the token the collector refused last (401), nil once a
	// POST is answered otherwise or watchToken saw it replaced.
	refused atomic.Pointer[string]
}

// watchToken, while the collector refuses the token, looks every tokenPoll
// for another one (Options.Token: a token file replaced by 'hookwatch
// install --token-file') and asks Follow for a pass at once when there is,
// instead of waiting out the backoff, until ctx ends.
func (f *forwarder) watchToken(ctx context.Context, flush chan<- chan struct{}) {
	if f.o.Token == nil {
		return
	}
	t := time.NewTicker(tokenPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		refused := f.refused.Load()
		if refused == nil {
			continue
		}
		if tok, _ := f.o.Token(); tok == *refused {
			continue
		}
		f.refused.CompareAndSwap(refused, nil)
		select {
		case flush <- make(chan struct{}):
		default: // a pass is already asked for
		}
	}
}

// token returns the token to send now and where it comes from, and logs a
// token that changed since the last POST, by its source, never its value.
func (f *forwarder) token() (string, hook.TokenSource) {
	if f.o.Token == nil {
		return "", hook.TokenNone
	}
	tok, src := f.o.Token()
	if f.sentAny && tok != f.sent {
		from := "HOOKWATCH_TOKEN"
		if src == hook.TokenFromFile {
			from = filepath.Join(f.o.Home, hook.TokenFile)
		}
		if tok == "" {
			f.o.Logger.Warn("the token is gone: sending none from now on", "from", from, "url", f.shown)
		} else {
			f.o.Logger.Info("the token changed: sending the new one from now on", "from", from, "url", f.shown)
		}
	}
	f.sent, f.sentAny = tok, true
	return tok, src
}

// send posts a batch the spool hands over: as many records as fit in one
// body at a time (hook.BatchFit, the collector's measure of a body). The
// envelopes the collector refuses on their own go to refuse, to be set
// aside once the whole batch is settled (hook.SendSpooled).
func (f *forwarder) send(ctx context.Context, recs [][]byte, refuse func(rec []byte, refusal error)) error {
	for len(recs) > 0 {
		n := hook.BatchFit(recs, len(recs), maxBodyBytes)
		if err := f.deliver(ctx, recs[:n], refuse); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// deliver posts recs. A batch the collector refuses for what it is
// (hook.Permanent) is sent again one envelope at a time (hook.SendEach),
// and the envelopes refused alone go to refuse: one bad envelope never
// wedges the spool. Any other failure is returned, keeping the batch
// spooled.
func (f *forwarder) deliver(ctx context.Context, recs [][]byte, refuse func(rec []byte, refusal error)) error {
	post := func(recs [][]byte) error { return f.post(ctx, recs) }
	if err := post(recs); !hook.Permanent(err) {
		return err
	}
	_, err := hook.SendEach(recs, post, refuse)
	return err
}

// post sends recs to POST /v1/events. A refusal is a hook.StatusError
// (hook.Permanent); any other answer but a 2xx is an error that says it.
func (f *forwarder) post(ctx context.Context, recs [][]byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.base+"/v1/events", bytes.NewReader(hook.BatchBody(recs)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hookwatch-forward")
	tok, src := f.token()
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := f.o.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		f.refused.Store(&tok)
	} else {
		f.refused.Store(nil)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		return nil
	case hook.Refused(resp.StatusCode):
		return hook.StatusError{Code: resp.StatusCode}
	case resp.StatusCode == http.StatusUnauthorized:
		what, fix := hook.RefusedToken(src, tok, f.o.Home, hook.Refusal(body, tok))
		switch src {
		case hook.TokenFromFile:
			// Kept spooled: the POST after the new token is installed
			// sends it, and them; watchToken asks for that POST at once.
			fix += ", which this forwarder sends within a second of its install, without a restart"
		case hook.TokenFromEnv:
			fix += "; this forwarder keeps the HOOKWATCH_TOKEN it started with until it is restarted"
		}
		return fmt.Errorf("the collector %s (HTTP 401): %s", what, fix)
	}
	if why := hook.Refusal(body, tok); why != "" {
		return fmt.Errorf("collector answered HTTP %d: %s", resp.StatusCode, why)
	}
	return fmt.Errorf("collector answered HTTP %d", resp.StatusCode)
}

// pruneArchive deletes, under dir, the compaction archive of every session
// whose files were all last written more than retain ago
// (ingest.PruneArchives, with no store to ask), now and every
// archivePruneEvery until ctx ends, logging what a pass deleted.
func pruneArchive(ctx context.Context, dir string, retain time.Duration, log *slog.Logger) {
	t := time.NewTicker(archivePruneEvery)
	defer t.Stop()
	for {
		sessions, bytes, err := ingest.PruneArchives(dir, time.Now().Add(-retain), nil)
		if err != nil {
			log.Error("cannot prune the compaction archive", "dir", dir, "err", err)
		}
		if sessions > 0 {
			log.Info("pruned the compaction archive", "dir", dir, "sessions", sessions, "bytes", bytes, "older_than", retain)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
