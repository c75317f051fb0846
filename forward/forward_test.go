package forward_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/forward"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/rejecttest"
	"github.com/hookwatch/hookwatch/internal/spooltest"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// TestForwardCrashAfterCommit forwards the real captures to a collector
// serving TLS with a user's token, and stops the forwarder at the worst
// moment: the collector has committed its first batch, the answer has not
// reached the forwarder. A new forwarder sends that batch again; the
// collector stores every envelope once, as the token's user, and says the
// repeated ones were duplicates.
func TestForwardCrashAfterCommit(t *testing.T) {
	db, srv, secret := authCollector(t)

	var (
		mu         sync.Mutex
		requests   int
		duplicates int
		stop       context.CancelFunc // the running forwarder's
	)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, r)
		var res collector.IngestResult
		_ = json.Unmarshal(rec.Body.Bytes(), &res)
		mu.Lock()
		requests++
		first := requests == 1
		duplicates += res.Duplicates
		mu.Unlock()
		if first {
			// Committed, not acknowledged: the forwarder dies now.
			stop()
			panic(http.ErrAbortHandler)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	ts.StartTLS()
	defer ts.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	// Verification is on: without the CA the collector's certificate is
	// refused.
	plain, err := forward.NewClient("")
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := plain.Get(ts.URL + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("a client without the CA file trusted the test certificate")
	}
	client, err := forward.NewClient(caFile)
	if err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	sp, recs := spoolCorpus(t, home, storetest.Corpus(t))
	token := func() (string, hook.TokenSource) { return secret, hook.TokenFromEnv }
	opts := forward.Options{Home: home, URL: ts.URL, Token: token, Client: client, Interval: 50 * time.Millisecond}
	runOnce := func() error {
		ctx, cancel := context.WithCancel(context.Background())
		mu.Lock()
		stop = cancel
		mu.Unlock()
		return forward.Run(ctx, opts)
	}
	if err := runOnce(); err != nil {
		t.Fatalf("first forwarder: %v", err)
	}
	if mu.Lock(); requests != 1 {
		t.Fatalf("the first forwarder made %d requests, want 1", requests)
	}
	mu.Unlock()

	done := make(chan error, 1)
	go func() { done <- runOnce() }()
	var stored int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		stored = storetest.CountEvents(t, db)
		st, _ := sp.Stats()
		if stored >= int64(len(recs)) && st.PendingBytes == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	stop()
	mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if stored != int64(len(recs)) {
		t.Fatalf("stored %d events, want %d", stored, len(recs))
	}
	page, err := db.Sessions(t.Context(), store.SessionFilter{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range page.Sessions {
		if s.User != "ann" {
			t.Errorf("session %s stored as %q's, want the token's user ann", s.ID, s.User)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if duplicates == 0 {
		t.Error("the batch committed before the crash was not sent again")
	}
	if _, err := os.Stat(filepath.Join(home, "rejected.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rejected.jsonl: %v", err)
	}
}

// TestForwardRefusesAttachedSpool: a forwarder does not start where a
// consumer (a local collector) is attached already.
func TestForwardRefusesAttachedSpool(t *testing.T) {
	home := t.TempDir()
	spooltest.Attach(t, home, "127.0.0.1:7421")
	var ran atomic.Bool
	err := forward.Run(t.Context(), forward.Options{Home: home, URL: "https://hookwatch.example", Ready: func() { ran.Store(true) }})
	if !errors.Is(err, spool.ErrAttached) || ran.Load() {
		t.Fatalf("Run beside an attached collector: %v (ran %v), want spool.ErrAttached", err, ran.Load())
	}
}

// startCollector returns a collector on a SQLite store of its own, shut
// down when the test ends, and its store.
// authCollector starts a collector that requires a token, on a database
// holding one user token, whose secret it returns.
func authCollector(t *testing.T) (store.Store, *collector.Server, string) {
	t.Helper()
	db := sqlite.MustOpenDB(t)
	tok, secret := store.NewToken("ann", "", store.RoleUser, time.Now())
	if err := db.CreateToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	srv, err := collector.New(collector.Config{Store: db, Version: "test", RequireAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return db, srv, secret
}

func startCollector(t *testing.T) (store.Store, *collector.Server) {
	t.Helper()
	db := sqlite.MustOpenDB(t)
	srv, err := collector.New(collector.Config{Store: db, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return db, srv
}

// TestForwardIsolatesRefused forwards a spooled batch in which the
// collector refuses one envelope (an id it does not accept): the others are
// stored, and only that one is set aside in rejected.jsonl. The collector
// drops the connection once, while the batch is sent one envelope at a
// time, on an envelope after the refused one: the batch stays spooled and
// is forwarded again, and the refused envelope is set aside once, not once
// per attempt.
func TestForwardIsolatesRefused(t *testing.T) {
	recs := rejecttest.Records(t)
	url, db, dropped := rejecttest.Collector(t, recs)
	home := t.TempDir()
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Append(recs...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- forward.Run(ctx, forward.Options{Home: home, URL: url, Interval: 50 * time.Millisecond})
	}()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st, _ := sp.Stats(); st.PendingBytes == 0 {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !dropped() {
		t.Fatal("the connection was never dropped")
	}
	if n := storetest.CountEvents(t, db); n != int64(len(recs)-1) {
		t.Fatalf("stored %d events, want %d", n, len(recs)-1)
	}
	b, err := os.ReadFile(filepath.Join(home, "rejected.jsonl"))
	if err != nil || string(b) != string(recs[rejecttest.Refused])+"\n" {
		t.Fatalf("rejected.jsonl: %v, %d lines; want the bad envelope once", err, bytes.Count(b, []byte("\n")))
	}
}

// TestForwardGathersATurn appends the hooks of a turn as they trickle in,
// 40 ms apart: the forwarder posts them together (spool.DefaultCoalesce),
// as the collector's own drainer stores them, rather than a request each.
func TestForwardGathersATurn(t *testing.T) {
	db, srv := startCollector(t)
	var posts atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/events" {
			posts.Add(1)
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	defer ts.Close()

	home := t.TempDir()
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		done <- forward.Run(ctx, forward.Options{Home: home, URL: ts.URL, Ready: func() { close(ready) }})
	}()
	<-ready
	corpus := storetest.Corpus(t)[:5]
	for i, p := range corpus {
		if i > 0 {
			time.Sleep(40 * time.Millisecond)
		}
		env := storetest.Envelope(p.Runtime, storetest.At(i), p.JSON)
		if err := sp.Append(env.AppendJSON(nil)); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); storetest.CountEvents(t, db) < int64(len(corpus)) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := storetest.CountEvents(t, db); n != int64(len(corpus)) {
		t.Fatalf("stored %d events, want %d", n, len(corpus))
	}
	// One POST, two should the machine stall past the gathering.
	if n := posts.Load(); n > 2 {
		t.Fatalf("%d POSTs for a turn of %d hooks 40 ms apart, want them gathered", n, len(corpus))
	}
}

// TestForwardNewTokenCutsBackoff: once the collector refuses the token, a
// new one written to the token file (as 'hookwatch install --token-file'
// does) is sent within seconds, with the events that waited, although the
// backoff after the refusal is an hour: the forwarder looks for a new
// token while refused, and does not wait the backoff out.
func TestForwardNewTokenCutsBackoff(t *testing.T) {
	db, srv, secret := authCollector(t)
	var refusals atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, r)
		if rec.Code == http.StatusUnauthorized {
			refusals.Add(1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer ts.Close()

	home := t.TempDir()
	tokenPath := filepath.Join(home, hook.TokenFile)
	if err := os.WriteFile(tokenPath, []byte("hwt_not_a_valid_token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, recs := spoolCorpus(t, home, storetest.Corpus(t)[:20])
	getenv := func(k string) string {
		if k == "HOOKWATCH_URL" {
			return ts.URL
		}
		return ""
	}
	token := func() (string, hook.TokenSource) { return hook.LookupToken(getenv, home) }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- forward.Run(ctx, forward.Options{Home: home, URL: ts.URL, Token: token, Interval: 50 * time.Millisecond,
			MinBackoff: time.Hour, MaxBackoff: time.Hour})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); refusals.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the collector was never asked with the invalid token")
		}
	}
	// Refused, and backing off for an hour: the new token is installed.
	time.Sleep(200 * time.Millisecond)
	if n := storetest.CountEvents(t, db); n != 0 {
		t.Fatalf("%d events stored with an invalid token", n)
	}
	if err := os.WriteFile(tokenPath, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	installed := time.Now()
	for storetest.CountEvents(t, db) != int64(len(recs)) {
		if time.Since(installed) > 20*time.Second {
			t.Fatalf("%d of %d events stored 20 s after the new token was installed (refused %d times)",
				storetest.CountEvents(t, db), len(recs), refusals.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := refusals.Load(); n != 1 {
		t.Errorf("the collector refused %d requests, want the one before the new token", n)
	}
}

// TestForwardSaysItRecovered: after failed attempts (the collector down,
// answering 503), the log says once that forwarding works again, so that
// its last lines are not failures that no longer happen.
func TestForwardSaysItRecovered(t *testing.T) {
	db, srv, secret := authCollector(t)
	var asked atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch asked.Add(1) {
		case 1: // the collector's refusal, its words redacted in the log
			http.Error(w, `{"error":"cannot store for `+r.Header.Get("Authorization")[len("Bearer "):]+`: password=hunter2hunter2\nretry"}`, http.StatusServiceUnavailable)
			return
		case 2: // a proxy's page, not quoted
			http.Error(w, "<html>\n<h1>502 Bad Gateway</h1></html>", http.StatusBadGateway)
			return
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	defer ts.Close()
	home := t.TempDir()
	_, recs := spoolCorpus(t, home, storetest.Corpus(t)[:5])
	var logged syncbuf.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- forward.Run(ctx, forward.Options{Home: home, URL: ts.URL, Interval: 20 * time.Millisecond,
			Token:      func() (string, hook.TokenSource) { return secret, hook.TokenFromEnv },
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	}()
	for deadline := time.Now().Add(20 * time.Second); storetest.CountEvents(t, db) != int64(len(recs)); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events stored:\n%s", storetest.CountEvents(t, db), len(recs), logged.String())
		}
	}
	// The line follows the pass that stored them: wait for it.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logged.String(), "forwarding again"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	out := logged.String()
	if strings.Count(out, "cannot forward the spool") != 2 || strings.Count(out, "forwarding again") != 1 || !strings.Contains(out, "failed_attempts=2") {
		t.Errorf("forward's log:\n%s", out)
	}
	// What the collector answered is quoted as hook.Refusal reads it: one
	// line, the token and secrets redacted; another server's page is not.
	if !strings.Contains(out, "HTTP 503: cannot store for [REDACTED:token]: password=") || strings.Contains(out, secret) ||
		strings.Contains(out, "hunter2") || strings.Contains(out, "Bad Gateway") || !strings.Contains(out, "HTTP 502") {
		t.Errorf("forward's log quotes the answers so:\n%s", out)
	}
}

// spoolCorpus opens home's spool and appends the envelopes of payloads to
// it, as hooks spool them, a millisecond apart; it returns the spool and
// the records appended.
func spoolCorpus(t *testing.T, home string, payloads []storetest.Payload) (*spool.Spool, [][]byte) {
	t.Helper()
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for i, p := range payloads {
		env := storetest.Envelope(p.Runtime, storetest.At(i), p.JSON)
		recs = append(recs, env.AppendJSON(nil))
	}
	if err := sp.Append(recs...); err != nil {
		t.Fatal(err)
	}
	return sp, recs
}

// TestForwardPrunesArchive: a forwarder delivering to a real collector
// deletes the compaction archive of this home's sessions whose files were
// all last written longer ago than ArchiveRetain — at its start, and at
// each later look — and logs what a pass deleted; a recent session's is
// kept, and so is an old session's in which a copy is being written. With
// no ArchiveRetain, nothing is deleted.
func TestForwardPrunesArchive(t *testing.T) {
	defer forward.SetArchivePruneEvery(50 * time.Millisecond)()
	db, srv := startCollector(t)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	home := t.TempDir()
	archive := filepath.Join(home, "archive")
	now := time.Now()
	old, recent := now.Add(-40*24*time.Hour), now.Add(-29*24*time.Hour)
	write := func(rel string, n int, mtime time.Time) {
		t.Helper()
		p := filepath.Join(archive, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), n), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(archive, rel))
		return err == nil
	}
	write("old-a/main/20260101T000000.000000000Z.jsonl", 1000, old)
	write("old-a/main/20260101T000000.000000000Z.summary.json", 24, old)
	write("old-a/agent-1/20260101T000100.000000000Z.jsonl", 200, old)
	write("old-b/main/20260102T000000.000000000Z.jsonl", 300, old)
	write("recent/main/20260103T000000.000000000Z.jsonl", 50, recent)
	// An old session compacting again: its new copy is being written.
	write("writing/main/20260101T000000.000000000Z.jsonl", 70, old)
	copyPath := filepath.Join(archive, "writing/main/20260201T000000.000000000Z.jsonl")
	copying, err := os.OpenFile(copyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer copying.Close()
	if _, err := copying.WriteString(`{"type":"user"}` + "\n"); err != nil {
		t.Fatal(err)
	}

	var stored int64
	forwardUntil := func(retain time.Duration, logged *syncbuf.Buffer, done func() bool) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			errc <- forward.Run(ctx, forward.Options{Home: home, URL: ts.URL, Interval: 20 * time.Millisecond,
				ArchiveRetain: retain, Logger: slog.New(slog.NewTextHandler(logged, nil))})
		}()
		deadline := time.Now().Add(20 * time.Second)
		for !done() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}

	// Without a retention: delivered, nothing deleted.
	_, recs := spoolCorpus(t, home, storetest.Corpus(t)[:3])
	var logged syncbuf.Buffer
	forwardUntil(0, &logged, func() bool { return storetest.CountEvents(t, db) == int64(len(recs)) })
	if stored = storetest.CountEvents(t, db); stored != int64(len(recs)) {
		t.Fatalf("stored %d events, want %d", stored, len(recs))
	}
	if !exists("old-a") || !exists("old-b") || strings.Contains(logged.String(), "pruned") {
		t.Fatalf("a forwarder with no ArchiveRetain deleted the archive:\n%s", logged.String())
	}

	// With 30 days: old-a and old-b at the start, and, at a later look,
	// a session that turned old meanwhile.
	more := storetest.Corpus(t)[3:6]
	_, recs = spoolCorpus(t, home, more)
	var turnedOld bool
	logged = syncbuf.Buffer{}
	forwardUntil(forward.DefaultArchiveRetain, &logged, func() bool {
		if exists("old-a") || exists("old-b") || storetest.CountEvents(t, db) < stored+int64(len(recs)) {
			return false
		}
		if !turnedOld {
			write("later/main/20260104T000000.000000000Z.jsonl", 5, old)
			turnedOld = true
		}
		return !exists("later")
	})
	if n := storetest.CountEvents(t, db); n != stored+int64(len(recs)) {
		t.Fatalf("stored %d events, want %d", n, stored+int64(len(recs)))
	}
	if exists("old-a") || exists("old-b") || exists("later") {
		t.Fatalf("archives past 30 days kept: old-a %v, old-b %v, later %v\n%s", exists("old-a"), exists("old-b"), exists("later"), logged.String())
	}
	if !exists("recent/main/20260103T000000.000000000Z.jsonl") || !exists("writing/main/20260101T000000.000000000Z.jsonl") {
		t.Fatal("the forwarder deleted a recent session's archive, or one whose copy is being written")
	}
	if _, err := copying.WriteString(`{"type":"assistant"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(copyPath); err != nil || strings.Count(string(b), "\n") != 2 {
		t.Fatalf("the copy being written: %q, %v", b, err)
	}
	out := logged.String()
	if !strings.Contains(out, "pruned the compaction archive") || !strings.Contains(out, "sessions=2 bytes=1524") ||
		!strings.Contains(out, "sessions=1 bytes=5") || !strings.Contains(out, "older_than=720h0m0s") {
		t.Errorf("forward's log of the passes:\n%s", out)
	}
}
