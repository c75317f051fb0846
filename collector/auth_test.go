package collector_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// tokenDB is a store that keeps tokens, as both backends do.
type tokenDB interface {
	store.Store
	store.TokenStore
}

func TestTokensSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// testTokens stops the collector, which closes db: neither the
	// database nor its write-ahead log holds a secret.
	secrets := testTokens(t, db)
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a token's secret", f)
			}
		}
		if !bytes.Contains(b, []byte(store.HashToken(secrets[0]))) && filepath.Base(f) == "hookwatch.db" {
			t.Errorf("%s lacks the hash of a token: the check above reads the wrong file", f)
		}
	}
}

func TestTokensPostgres(t *testing.T) {
	testTokens(t, postgres.MustOpenDB(t, pgtest.NewDatabase(t)))
}

// testTokens runs a collector with per-user tokens on db and checks, through
// real HTTP, who may send and read what. It stops the collector, which
// closes db, and returns the secrets it used.
func testTokens(t *testing.T, db tokenDB) []string {
	now := time.Now()
	mint := func(user, team, role string) (store.Token, string) {
		tok, secret := store.NewToken(user, team, role, now)
		if err := db.CreateToken(t.Context(), tok); err != nil {
			t.Fatal(err)
		}
		return tok, secret
	}
	_, ann := mint("ann", "red", store.RoleUser)
	_, bob := mint("bob", "blue", store.RoleUser)
	_, lead := mint("lead", "red", store.RoleTeam)
	_, root := mint("root", "", store.RoleAdmin)
	gone, revoked := mint("ann", "red", store.RoleUser)
	if err := db.RevokeToken(t.Context(), gone.ID, now); err != nil {
		t.Fatal(err)
	}
	const envAdmin = "env-admin-secret-0123456789"
	var logs syncbuf.Buffer
	s := newServerOn(t, collector.Config{Token: envAdmin, RequireAuth: true,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, db)
	s.tok = ""
	as := func(secret string) []string { return []string{"Authorization", "Bearer " + secret} }

	// ann's stream, opened before anything is sent, must carry only hers.
	s.tok = ann
	annStream := s.openStream(t, "")
	s.tok = ""

	send := func(secret string, want int, envs ...event.Envelope) {
		t.Helper()
		code, body := s.do(t, http.MethodPost, "/v1/events", batch(t, envs), as(secret)...)
		if code != want {
			t.Fatalf("POST /v1/events: %d %s, want %d", code, body, want)
		}
	}
	// bob claims to be ann: he is recorded as bob all the same.
	bobEnv := synth(1, "session_id", "s-bob", "hook_event_name", "UserPromptSubmit", "prompt", "bob's secret plan")
	bobEnv.User = "ann"
	send(bob, 200, bobEnv)
	send(ann, 200, synth(2, "session_id", "s-ann", "hook_event_name", "UserPromptSubmit", "prompt", "ann's prompt"))
	send(lead, 200, synth(3, "session_id", "s-lead", "hook_event_name", "Notification"))
	// The admin token of HOOKWATCH_TOKEN keeps the user the envelope names.
	hostEnv := synth(4, "session_id", "s-host", "hook_event_name", "Notification")
	hostEnv.User = "ops"
	send(envAdmin, 200, hostEnv)
	// bob cannot write into ann's session, and nothing of it is stored.
	send(bob, 403, synth(5, "session_id", "s-bob", "hook_event_name", "Stop"), synth(6, "session_id", "s-ann", "hook_event_name", "Stop"))

	if ev := annStream.nextEvent(); !strings.Contains(ev.Data, `"s-ann"`) {
		t.Errorf("ann's stream sent first %s, want her event", ev.Data)
	}

	owner := func(id string) string {
		sess, err := db.Session(t.Context(), id)
		if err != nil {
			t.Fatalf("Session(%s): %v", id, err)
		}
		return sess.User
	}
	for id, want := range map[string]string{"s-bob": "bob", "s-ann": "ann", "s-lead": "lead", "s-host": "ops"} {
		if got := owner(id); got != want {
			t.Errorf("session %s recorded as %q, want %q", id, got, want)
		}
	}
	if sess, _ := db.Session(t.Context(), "s-bob"); sess.EventCount != 1 {
		t.Errorf("s-bob has %d events after a refused batch, want 1", sess.EventCount)
	}

	// What each principal lists.
	list := func(secret string, want ...string) {
		t.Helper()
		code, body := s.do(t, http.MethodGet, "/v1/sessions", nil, as(secret)...)
		var res collector.SessionsResponse
		if code != 200 || json.Unmarshal(body, &res) != nil {
			t.Fatalf("GET /v1/sessions: %d %s", code, body)
		}
		var got []string
		for _, v := range res.Sessions {
			got = append(got, v.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("sessions seen = %v, want %v", got, want)
		}
	}
	list(ann, "s-ann")
	list(bob, "s-bob")
	list(lead, "s-ann", "s-lead")
	list(root, "s-ann", "s-bob", "s-host", "s-lead")
	list(envAdmin, "s-ann", "s-bob", "s-host", "s-lead")

	// Every endpoint refuses a missing, wrong or revoked token, and
	// another user's session, and never answers with data.
	// A stream answered 200 by mistake would never end: each request has
	// a deadline.
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string, want int, hdr ...string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.http.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		code, body := 0, []byte(nil)
		res, err := client.Do(req)
		if err == nil {
			code = res.StatusCode
			body, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		if err != nil {
			t.Errorf("GET %s: %d %v, want %d", path, code, err, want)
			return
		}
		if code != want {
			t.Errorf("GET %s: %d %s, want %d", path, code, body, want)
		}
		if code >= 400 && (bytes.Contains(body, []byte("plan")) || bytes.Contains(body, []byte("s-"))) {
			t.Errorf("GET %s refused with data: %s", path, body)
		}
	}
	for _, path := range []string{"/v1/sessions", "/v1/sessions/s-bob", "/v1/sessions/s-bob/events", "/v1/sessions/s-bob/agents",
		"/v1/sessions/s-bob/tool-calls", "/v1/sessions/s-bob/signals", "/v1/stream", "/v1/stream?session_id=s-bob", "/metrics"} {
		get(path, 401)
		get(path, 401, as("hwt_0000")...)
		get(path, 401, as(revoked)...)
		get(path, 401, "Authorization", ann) // no scheme
	}
	for _, path := range []string{"/v1/sessions/s-bob", "/v1/sessions/s-bob/events", "/v1/sessions/s-bob/agents",
		"/v1/sessions/s-bob/tool-calls", "/v1/sessions/s-bob/signals", "/v1/sessions/s-bob/archives", "/v1/sessions/s-bob/files",
		"/v1/sessions/s-bob/compare/s-lead", "/v1/sessions/s-lead/compare/s-bob", "/v1/stream?session_id=s-bob"} {
		get(path, 403, as(ann)...)
		get(path, 403, as(lead)...) // bob is not in lead's team
	}
	get("/metrics", 403, as(ann)...)
	get("/metrics", 403, as(lead)...)
	get("/metrics", 200, as(root)...)
	get("/v1/sessions/s-ann/events", 200, as(lead)...)
	get("/v1/sessions/s-bob/events", 200, as(bob)...)
	get("/v1/sessions/s-bob/events", 200, as(root)...)
	send(revoked, 401, synth(7, "session_id", "s-ann", "hook_event_name", "Stop"))
	send("", 401, synth(7, "session_id", "s-ann", "hook_event_name", "Stop"))
	// The refusal says which it is, so that whoever reads it (a
	// forwarder's log, curl) knows what to do: a revoked token is
	// replaced, not checked for typos.
	for _, c := range []struct {
		hdr []string
		why string
	}{
		{nil, "no bearer token"},
		{as("hwt_0000"), "unknown bearer token"},
		{as(revoked), "bearer token was revoked"},
	} {
		if code, body := s.do(t, http.MethodGet, "/v1/sessions", nil, c.hdr...); code != 401 || !strings.Contains(string(body), c.why) {
			t.Errorf("GET /v1/sessions %v: %d %s, want 401 saying %q", c.hdr, code, body, c.why)
		}
	}
	// A revoked token's holder is told what replaces it wherever it is
	// kept, HOOKWATCH_TOKEN overriding the token file install writes (as
	// doctor says: hook.RefusedToken), and the clients give all of it.
	if _, body := s.do(t, http.MethodGet, "/v1/sessions", nil, as(revoked)...); !strings.HasSuffix(hook.Refusal(body, revoked), ": "+hook.RevokedTokenFix) {
		t.Errorf("the refusal of a revoked token, as clients read it: %q, want it to end with %q", hook.Refusal(body, revoked), hook.RevokedTokenFix)
	}

	secrets := []string{ann, bob, lead, root, revoked, envAdmin}
	// Stopped, the collector writes no more to the log or the store.
	s.stop()
	out := logs.String()
	if !strings.Contains(out, "level=") && out != "" {
		t.Fatalf("unexpected log format: %s", out)
	}
	for _, secret := range secrets {
		if strings.Contains(out, secret) || strings.Contains(out, secret[len(secret)-16:]) {
			t.Errorf("the collector's log holds a token: %s", out)
		}
	}
	return secrets
}

// TestFirstTokenClosesRunningCollectors creates the first token of a shared
// PostgreSQL database while two collectors serve it open: both start
// requiring tokens without a restart, and take the new one.
func TestFirstTokenClosesRunningCollectors(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := newServerOn(t, collector.Config{}, postgres.MustOpenDB(t, url))
	b := newServerOn(t, collector.Config{}, postgres.MustOpenDB(t, url))
	testFirstTokenCloses(t, postgres.MustOpenDB(t, url), a, b)
}

// TestFirstTokenClosesRunningCollectorSQLite is the same on the laptop's
// SQLite file, the token created through another connection as `hookwatch
// token create` does.
func TestFirstTokenClosesRunningCollectorSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwatch.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a := newServerOn(t, collector.Config{}, db)
	other, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	testFirstTokenCloses(t, other, a)
}

func testFirstTokenCloses(t *testing.T, db store.TokenStore, servers ...*testServer) {
	for _, s := range servers {
		if code, body := s.do(t, http.MethodGet, "/v1/sessions", nil); code != http.StatusOK {
			t.Fatalf("open collector: GET /v1/sessions: %d %s", code, body)
		}
	}
	tok, secret := store.NewToken("ann", "", store.RoleUser, time.Now())
	if err := db.CreateToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	for i, s := range servers {
		deadline := time.Now().Add(10 * time.Second)
		for {
			code, _ := s.do(t, http.MethodGet, "/v1/sessions", nil)
			if code == http.StatusUnauthorized {
				break
			}
			if code != http.StatusOK || time.Now().After(deadline) {
				t.Fatalf("collector %d after the first token: GET /v1/sessions without one: %d, want 401", i, code)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if code, body := s.do(t, http.MethodGet, "/v1/sessions", nil, "Authorization", "Bearer "+secret); code != http.StatusOK {
			t.Fatalf("collector %d: GET /v1/sessions with the new token: %d %s", i, code, body)
		}
		env := event.Envelope{ID: "019a0000-0000-7000-8000-00000000f157", Runtime: "claude-code", Host: "laptop", User: "mallory",
			Payload: []byte(`{"hook_event_name":"SessionStart","session_id":"first-token"}`)}
		if code, _ := s.do(t, http.MethodPost, "/v1/events", batch(t, []event.Envelope{env})); code != http.StatusUnauthorized {
			t.Fatalf("collector %d: POST /v1/events without a token: %d, want 401", i, code)
		}
	}
}

// TestSessionOwnerRacePostgres: two users post their first events of one
// new session id at once, through two collectors of one database: one
// user's are all stored, the other's are all refused (403) and none of
// them is stored.
func TestSessionOwnerRacePostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := postgres.MustOpenDB(t, url)
	a := newServerOn(t, collector.Config{RequireAuth: true}, db)
	b := newServerOn(t, collector.Config{RequireAuth: true}, postgres.MustOpenDB(t, url))
	testSessionOwnerRace(t, db, a, b)
}

// TestSessionOwnerRaceSQLite is the same on one collector's SQLite file.
func TestSessionOwnerRaceSQLite(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	s := newServerOn(t, collector.Config{RequireAuth: true}, db)
	testSessionOwnerRace(t, db, s, s)
}

func testSessionOwnerRace(t *testing.T, db tokenDB, annSrv, bobSrv *testServer) {
	secrets := map[string]string{}
	for _, u := range []string{"ann", "bob"} {
		tok, secret := store.NewToken(u, "", store.RoleUser, time.Now())
		if err := db.CreateToken(t.Context(), tok); err != nil {
			t.Fatal(err)
		}
		secrets[u] = secret
	}
	const perUser = 12
	var mu sync.Mutex
	codes := map[string][]int{}
	var ids sync.Map // envelope id → user
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 2 * perUser {
		user, srv := "ann", annSrv
		if i%2 == 1 {
			user, srv = "bob", bobSrv
		}
		env := storetest.Envelope(event.RuntimeClaudeCode, storetest.At(i),
			storetest.P("session_id", "s-shared", "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", fmt.Sprintf("toolu_%02d", i)))
		ids.Store(env.ID, user)
		body := batch(t, []event.Envelope{env})
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest(http.MethodPost, srv.http.URL+"/v1/events", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+secrets[user])
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			mu.Lock()
			codes[user] = append(codes[user], res.StatusCode)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	sess, err := db.Session(t.Context(), "s-shared")
	if err != nil {
		t.Fatal(err)
	}
	winner, loser := sess.User, "bob"
	if winner == "bob" {
		loser = "ann"
	}
	count := func(codes []int, want int) int {
		n := 0
		for _, c := range codes {
			if c == want {
				n++
			}
		}
		return n
	}
	if count(codes[winner], http.StatusOK) != perUser || count(codes[loser], http.StatusForbidden) != perUser {
		t.Fatalf("session owned by %q; answers: %v, want every one of %s's 200 and of %s's 403", winner, codes, winner, loser)
	}
	page, err := db.Events(t.Context(), store.EventFilter{SessionID: "s-shared", Limit: 4 * perUser})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != perUser || sess.EventCount != perUser {
		t.Fatalf("stored %d events (count %d), want %s's %d", len(page.Events), sess.EventCount, winner, perUser)
	}
	for _, e := range page.Events {
		if u, _ := ids.Load(e.ID); u != winner {
			t.Errorf("stored %s's event %s in %s's session", u, e.ID, winner)
		}
	}
}

// TestTokenChecksDatabaseDown: while the PostgreSQL database does not
// answer, every request that needs a token is answered 503 saying so, and
// the log says it once, not once per request (a team's hooks send many a
// second); when the database answers again the log says that too, and the
// token is taken again.
func TestTokenChecksDatabaseDown(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := postgres.MustOpenDB(t, url)
	tok, secret := store.NewToken("ann", "", store.RoleUser, time.Now())
	if err := db.CreateToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	s := newServerOn(t, collector.Config{RequireAuth: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, db)
	s.tok = secret
	if code, body := s.do(t, http.MethodGet, "/v1/sessions", nil); code != http.StatusOK {
		t.Fatalf("with the database up: %d %s", code, body)
	}

	// The model's lease is taken in the background: held before the
	// database goes, for its loss to be told.
	for deadline := time.Now().Add(10 * time.Second); !s.LeadingForTest(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the collector never took the model's lease")
		}
	}

	// The database refuses connections, and its open ones end.
	restore := pgtest.CutDatabase(t, url)
	before := logs.String()
	for range 20 {
		res, body := s.send(t, http.MethodGet, "/v1/sessions", nil)
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "database") || res.Header.Get("Retry-After") == "" {
			t.Fatalf("with the database down: %d (Retry-After %q) %s, want 503 with Retry-After naming the database", res.StatusCode, res.Header.Get("Retry-After"), body)
		}
	}
	during := strings.TrimPrefix(logs.String(), before)
	var tokenErrors []string
	for _, line := range strings.Split(during, "\n") {
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, "token") {
			tokenErrors = append(tokenErrors, line)
		}
	}
	if len(tokenErrors) != 1 || !strings.Contains(tokenErrors[0], "database does not answer") {
		t.Errorf("20 requests with the database down logged %d token errors, want 1 saying the database does not answer:\n%s", len(tokenErrors), strings.Join(tokenErrors, "\n"))
	}

	// The model's lease went with its connection: the log says why, and
	// not that another collector took it, which none may have.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "lease") && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "lease") && (!strings.Contains(line, "connection to the database ended") || strings.Contains(line, "another collector takes it over")) {
			t.Errorf("the lease lost with the database: %s", line)
		}
	}
	if !strings.Contains(logs.String(), "lease") {
		t.Errorf("no word of the lease lost with the database:\n%s", logs.String())
	}

	restore()
	if code, body := s.do(t, http.MethodGet, "/v1/sessions", nil); code != http.StatusOK {
		t.Fatalf("with the database up again: %d %s", code, body)
	}
	if !strings.Contains(logs.String(), "the database answers the token checks again") {
		t.Errorf("no word of the database answering again:\n%s", logs.String())
	}
}

// TestIngestDatabaseDown: with HOOKWATCH_TOKEN (no token to look up in the
// database), a batch or an http hook event sent while the database does not
// answer fails its commit, and the log says so once, not once per request;
// when the database answers again the log says that too.
func TestIngestDatabaseDown(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := postgres.MustOpenDB(t, url)
	var logs syncbuf.Buffer
	const admin = "an-admin-token-long-enough-to-listen-anywhere-0123456789"
	s := newServerOn(t, collector.Config{Token: admin, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, db)
	s.tok = admin
	s.Handle("POST /v1/hooks/claude", s.HandleClaudeHook(collector.ClaudeHookConfig{Home: t.TempDir()}))
	post := func(i int) (*http.Response, []byte) {
		env := storetest.Envelope(event.RuntimeClaudeCode, storetest.At(i), []byte(fmt.Sprintf(`{"session_id":"down-%d","hook_event_name":"Stop"}`, i)))
		return s.send(t, http.MethodPost, "/v1/events", batch(t, []event.Envelope{env}))
	}
	if res, body := post(0); res.StatusCode != http.StatusOK {
		t.Fatalf("with the database up: %d %s", res.StatusCode, body)
	}
	restore := pgtest.CutDatabase(t, url)
	before := logs.String()
	for i := 1; i <= 10; i++ {
		// 503 with Retry-After: the batch is to be kept and sent again,
		// which every client does (hook.Refused is not 503).
		res, body := post(i)
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "database") || hook.Refused(res.StatusCode) {
			t.Fatalf("batch %d with the database down: %d (Retry-After %q) %s, want 503 with Retry-After naming the database", i, res.StatusCode, res.Header.Get("Retry-After"), body)
		}
		if strings.Contains(string(body), "127.0.0.1") {
			t.Errorf("the answer names the database's address: %s", body)
		}
		hook := fmt.Sprintf(`{"session_id":"down-hook-%d","hook_event_name":"UserPromptSubmit","prompt":"hi","cwd":"/tmp","transcript_path":"/tmp/t.jsonl"}`, i)
		if code, body := s.do(t, http.MethodPost, "/v1/hooks/claude", []byte(hook)); code != http.StatusOK {
			t.Fatalf("http hook with the database down: %d %s, want 200 (a hook never breaks the agent)", code, body)
		}
	}
	var errs, modelErrs []string
	for _, line := range strings.Split(strings.TrimPrefix(logs.String(), before), "\n") {
		switch {
		case !strings.Contains(line, "level=ERROR"):
		case strings.Contains(line, "model"): // the modeler's own retries
			modelErrs = append(modelErrs, line)
		default:
			errs = append(errs, line)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "database does not answer") {
		t.Errorf("20 requests with the database down logged %d errors, want 1 saying the database does not answer:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	if len(modelErrs) > 1 {
		t.Errorf("the modeler logged %d errors with the database down, want at most 1:\n%s", len(modelErrs), strings.Join(modelErrs, "\n"))
	}
	restore()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if res, _ := post(100); res.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the database up again takes no batch")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "the database takes the commits again") {
		t.Errorf("no word of the database answering again:\n%s", logs.String())
	}
}

// unownedStore is a store that is no store.OwnedInserter, whose batches
// claimSessions checks before their commit: the events and sessions in
// one store, the users' tokens in another, so that the first can fail
// while tokens are still checked.
type unownedStore struct {
	store.Store
	store.TokenStore
}

// TestClaimSessionsDatabaseDown: a user's batch whose sessions' owners the
// store cannot read (SQLite closed under the collector) is answered as a
// failed commit is: 503 with Retry-After, no word of the database's error,
// and one line in the log, not one per batch.
func TestClaimSessionsDatabaseDown(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	testClaimDatabaseDown(t, db, func() {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestClaimSessionsDatabaseDownPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	testClaimDatabaseDown(t, postgres.MustOpenDB(t, url), func() { pgtest.CutDatabase(t, url) })
}

// testClaimDatabaseDown runs a collector on events, no OwnedInserter, takes
// a user's batch, calls cut to make events fail, and checks the answer to
// the batches sent then.
func testClaimDatabaseDown(t *testing.T, events store.Store, cut func()) {
	tokens := sqlite.MustOpenDB(t)
	tok, secret := store.NewToken("ann", "red", store.RoleUser, time.Now())
	if err := tokens.CreateToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	s := newServerOn(t, collector.Config{RequireAuth: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, unownedStore{events, tokens})
	s.tok = secret
	post := func(i int) (*http.Response, []byte) {
		env := storetest.Envelope(event.RuntimeClaudeCode, storetest.At(i), []byte(`{"session_id":"claimed","hook_event_name":"Stop"}`))
		return s.send(t, http.MethodPost, "/v1/events", batch(t, []event.Envelope{env}))
	}
	if res, body := post(0); res.StatusCode != http.StatusOK {
		t.Fatalf("with the database up: %d %s", res.StatusCode, body)
	}
	cut()
	before := logs.String()
	const want = `{"error":"cannot store the batch: the database does not answer; retry later"}`
	for i := 1; i <= 10; i++ {
		res, body := post(i)
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || strings.TrimSpace(string(body)) != want {
			t.Fatalf("batch %d with the database down: %d (Retry-After %q) %s, want 503 with Retry-After and %s", i, res.StatusCode, res.Header.Get("Retry-After"), body, want)
		}
	}
	var errs []string
	for _, line := range strings.Split(strings.TrimPrefix(logs.String(), before), "\n") {
		if strings.Contains(line, "level=ERROR") && !strings.Contains(line, "model") {
			errs = append(errs, line)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "the database does not answer") {
		t.Errorf("10 batches with the database down logged %d errors, want 1 saying the database does not answer:\n%s", len(errs), strings.Join(errs, "\n"))
	}
}
