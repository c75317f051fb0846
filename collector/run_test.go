package collector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "hookwatch.db"))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// waitEvents waits until the session has n events in db.
func waitEvents(t *testing.T, db store.Store, session string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		page, err := db.Events(context.Background(), store.EventFilter{SessionID: session})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s has %d events, want %d", session, len(page.Events), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStartStop runs a collector in process as hookwatch serve does: it
// serves the API and the assets, attaches to the home's spool and takes the
// events hooks hand over there, answers http hooks and the hook socket, and
// Stop undoes it all in the reverse order, the store last.
func TestStartStop(t *testing.T) {
	home := t.TempDir()
	spoolDir := filepath.Join(home, "spool")
	db := openStore(t)
	var logs syncbuf.Buffer
	c, err := collector.Start(collector.Options{
		Config: collector.Config{Store: db, Version: "test", Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		Addr:   "127.0.0.1:0",
		Home:   home,
		Assets: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "dashboard") }),
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop(context.Background())
		}
	}()

	get := func(path string) string {
		t.Helper()
		res, err := http.Get(c.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
		}
		return string(b)
	}
	if got := get("/healthz"); !strings.Contains(got, "test") {
		t.Errorf("/healthz = %s", got)
	}
	if got := get("/"); got != "dashboard" {
		t.Errorf("GET / = %q", got)
	}
	if !spool.AttachedTo(spoolDir, c.Addr().String()) {
		t.Fatal("not attached to the home's spool")
	}
	if _, err := os.Stat(hooksock.Path(home)); err != nil {
		t.Fatalf("no hook socket: %v", err)
	}

	// A hook on this machine hands its event over through the spool.
	sp, err := spool.Open(spoolDir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(synth(1, "session_id", "run-1", "hook_event_name", "Stop"))
	if err := sp.Append(b); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, db, "run-1", 1)

	// An http hook is answered and stored.
	res, err := http.Post(c.URL()+"/v1/hooks/claude", "application/json",
		strings.NewReader(`{"session_id":"run-2","cwd":"/tmp","hook_event_name":"Notification","message":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/hooks/claude: %d", res.StatusCode)
	}
	waitEvents(t, db, "run-2", 1)

	// A second collector on the same home serves, but the spool and the
	// hook socket stay the first one's.
	second, err := collector.Start(collector.Options{
		Config: collector.Config{Store: openStore(t), Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		Addr:   "127.0.0.1:0",
		Home:   home,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if !strings.Contains(logs.String(), "not attached to the local spool") {
		t.Errorf("the second collector did not say it is not attached:\n%s", logs.String())
	}
	if !spool.AttachedTo(spoolDir, c.Addr().String()) {
		t.Fatal("the second collector's stop detached the first")
	}
	if _, err := os.Stat(hooksock.Path(home)); err != nil {
		t.Fatalf("the second collector's stop removed the first's hook socket: %v", err)
	}

	stopped = true
	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("second call of Stop: %v", err)
	}
	if spool.AttachedTo(spoolDir, c.Addr().String()) {
		t.Error("still attached after Stop")
	}
	if _, err := os.Stat(hooksock.Path(home)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("hook socket after Stop: %v", err)
	}
	if _, err := http.Get(c.URL() + "/healthz"); err == nil {
		t.Error("still listening after Stop")
	}
	if _, err := db.Events(context.Background(), store.EventFilter{SessionID: "run-1"}); err == nil {
		t.Error("the store is still open after Stop")
	}
}

// TestStartFails: a collector that cannot listen closes the store it was
// given, and one without a home refuses to start.
func TestStartFails(t *testing.T) {
	busy := newServer(t, collector.Config{})
	addr := strings.TrimPrefix(busy.http.URL, "http://")
	db := openStore(t)
	_, err := collector.Start(collector.Options{Config: collector.Config{Store: db}, Addr: addr, Home: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "cannot listen on "+addr) {
		t.Fatalf("Start on a busy address: %v", err)
	}
	if _, err := db.Events(context.Background(), store.EventFilter{SessionID: "x"}); err == nil {
		t.Error("the store is still open after a failed Start")
	}
	if _, err := collector.Start(collector.Options{Config: collector.Config{Store: openStore(t)}, Addr: "127.0.0.1:0"}); err == nil {
		t.Error("Start without a home succeeded")
	}
}

// TestRun: Run calls ready once the collector listens, and returns nil
// when its context ends.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	db := openStore(t)
	env := storetest.Envelope(event.RuntimeClaudeCode, storetest.At(0), []byte(`{"session_id":"run-3","hook_event_name":"Stop"}`))
	done := make(chan error, 1)
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	go func() {
		done <- collector.Run(ctx, collector.Options{Config: collector.Config{Store: db, Logger: log}, Addr: "127.0.0.1:0", Home: t.TempDir()}, func(c *collector.Collector) {
			b := batch(t, []event.Envelope{env})
			res, err := http.Post(c.URL()+"/v1/events", "application/json", bytes.NewReader(b))
			if err == nil {
				res.Body.Close()
			}
			cancel()
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	// The end of its context (SIGTERM, Ctrl-C) is logged, once.
	if n := strings.Count(logs.String(), "level=INFO msg=\"shutting down"); n != 1 {
		t.Errorf("the log says %d times that the collector shuts down, want once:\n%s", n, logs.String())
	}
	// What was accepted before the stop is in the store, closed now.
	db2, err := sqlite.Open(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	waitEvents(t, db2, "run-3", 1)
}

// TestClaudeHookHandOff: an attached collector answers an http hook once
// its event is in the home's spool, which it drains, and stores what was
// handed over before it stops; the events of a user's token are committed
// before the answer, since only the commit checks whose session they write
// into.
func TestClaudeHookHandOff(t *testing.T) {
	home := t.TempDir()
	db := openStore(t)
	tok, secret := store.NewToken("ann", "", store.RoleUser, time.Now())
	if err := db.CreateToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	const adminSecret = "the-collector-token" // HOOKWATCH_TOKEN: no user of its own
	c, err := collector.Start(collector.Options{Config: collector.Config{Store: db, Token: adminSecret}, Addr: "127.0.0.1:0", Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background()) // a second Stop does nothing
	post := func(session, secret string) {
		t.Helper()
		req, _ := http.NewRequest("POST", c.URL()+"/v1/hooks/claude",
			strings.NewReader(`{"session_id":"`+session+`","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_`+session+`"}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("POST /v1/hooks/claude for %s: %s", session, res.Status)
		}
	}
	spooled := func(session string) bool {
		b, err := os.ReadFile(filepath.Join(home, "spool", "current.jsonl"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return bytes.Contains(b, []byte(`toolu_`+session))
	}

	post("handed-1", adminSecret)
	if !spooled("handed-1") {
		t.Fatal("the answered event is not in the spool")
	}
	waitEvents(t, db, "handed-1", 1)

	post("owned-1", secret)
	if spooled("owned-1") {
		t.Error("the event of a user's token went through the spool")
	}
	sess, err := db.Session(t.Context(), "owned-1")
	if err != nil || sess.User != "ann" || sess.EventCount != 1 {
		t.Errorf("the event of a user's token is not committed as hers before the answer: %+v, %v", sess, err)
	}

	// Handed over, then the collector stops at once: stored all the same.
	for i := range 20 {
		post(fmt.Sprint("handed-2-", i), adminSecret)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	db2, err := sqlite.Open(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for i := range 20 {
		if sess, err := db2.Session(t.Context(), fmt.Sprint("handed-2-", i)); err != nil || sess.EventCount != 1 {
			t.Errorf("event %d handed over before the stop: %+v, %v", i, sess, err)
		}
	}
}

// TestPolicySignalsSeeHandedOver: a policy reading a session's signals
// sees the events its hooks handed over through the spool a moment before,
// which the drainer would otherwise store only after its coalescing wait.
func TestPolicySignalsSeeHandedOver(t *testing.T) {
	home := t.TempDir()
	db := openStore(t)
	c, err := collector.Start(collector.Options{Config: collector.Config{Store: db}, Addr: "127.0.0.1:0", Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The session starts; the drainer runs.
	b, _ := json.Marshal(synth(0, "session_id", "handed-signals", "hook_event_name", "SessionStart", "source", "startup"))
	if err := sp.Append(b); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, db, "handed-signals", 1)
	for i := range 3 {
		id := fmt.Sprint("toolu_failing_", i)
		for j, kv := range [][]any{
			{"hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_input", map[string]any{"command": "go test ./..."}, "tool_use_id", id},
			{"hook_event_name", "PostToolUseFailure", "tool_name", "Bash", "tool_input", map[string]any{"command": "go test ./..."}, "tool_use_id", id, "error", "exit status 1"},
		} {
			b, _ := json.Marshal(synth(10*i+j+1, append([]any{"session_id", "handed-signals"}, kv...)...))
			if err := sp.Append(b); err != nil {
				t.Fatal(err)
			}
		}
		agents, err := c.Server().PolicySignals(t.Context(), "handed-signals")
		if err != nil {
			t.Fatal(err)
		}
		if len(agents) != 1 || agents[0].FailuresInARow != i+1 {
			t.Fatalf("after %d failed calls handed over, the signals read %+v, want one agent with %d failures in a row", i+1, agents, i+1)
		}
	}
}

// TestHealthyOnceAttached: a client that finds the collector healthy finds
// it attached to the home's spool and answering the hook socket. A hook run
// in between would find no collector to ask its policy of (the lean hook
// has no engine of its own) and answer nothing. Start is held where it is
// attached and the socket does not listen yet: /healthz must not answer
// there, and answers once Start goes on, naming the spool.
func TestHealthyOnceAttached(t *testing.T) {
	home := t.TempDir()
	addr := testbin.FreeAddr(t)
	held, release := make(chan struct{}), make(chan struct{})
	defer collector.SetBeforeSocketForTest(func() { close(held); <-release })()
	type started struct {
		c   *collector.Collector
		err error
	}
	done := make(chan started, 1)
	go func() {
		c, err := collector.Start(collector.Options{
			Config: collector.Config{Store: openStore(t), Version: "test", Logger: slog.New(slog.DiscardHandler)},
			Addr:   addr,
			Home:   home,
		})
		done <- started{c, err}
	}()
	select {
	case <-held:
	case s := <-done:
		t.Fatalf("Start returned without opening the hook socket: %v", s.err)
	}
	if !spool.AttachedTo(filepath.Join(home, "spool"), addr) {
		t.Error("not attached to the spool before the hook socket")
	}
	client := &http.Client{Timeout: 300 * time.Millisecond}
	if res, err := client.Get("http://" + addr + "/healthz"); err == nil {
		res.Body.Close()
		t.Errorf("/healthz answered %d before the hook socket listens", res.StatusCode)
	}
	close(release)
	s := <-done
	if s.err != nil {
		t.Fatal(s.err)
	}
	defer s.c.Stop(context.Background())
	res, err := http.Get(s.c.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		Spool *json.RawMessage `json:"spool"`
	}
	err = json.NewDecoder(res.Body).Decode(&health)
	res.Body.Close()
	if _, serr := os.Stat(hooksock.Path(home)); res.StatusCode != http.StatusOK || serr != nil || err != nil {
		t.Fatalf("/healthz %d (%v), hook socket: %v", res.StatusCode, err, serr)
	}
	// It names the spool it drains as soon as Start returns: install
	// and doctor tell another home's collector by it.
	if health.Spool == nil {
		t.Error("/healthz names no spool right after Start")
	}
}
