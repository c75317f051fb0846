package collector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/internal/syncbuf"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// TestSharedDatabase runs two collectors on one real PostgreSQL database:
// they store each envelope once whichever receives it, the stream of one
// shows the events the other took, one of them computes the model and both
// serve it, and when that one stops the other takes over.
func TestSharedDatabase(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := newServerOn(t, collector.Config{}, postgres.MustOpenDB(t, url))
	b := newServerOn(t, collector.Config{}, postgres.MustOpenDB(t, url))
	stream := b.openStream(t, "")

	envs := corpusEnvelopes(t)
	half := len(envs) / 2
	a.post(t, envs[:half], half, 0)
	b.post(t, envs[half:], len(envs)-half, 0)
	// Retries through the other collector store nothing twice.
	b.post(t, envs[:half], 0, half)
	a.post(t, envs, 0, len(envs))

	seen := map[string]bool{}
	var last int64
	for len(seen) < len(envs) {
		var e struct {
			Seq int64  `json:"seq"`
			ID  string `json:"id"`
		}
		if err := json.Unmarshal([]byte(stream.nextEvent().Data), &e); err != nil {
			t.Fatal(err)
		}
		if seen[e.ID] || e.Seq <= last {
			t.Fatalf("the stream repeated or reordered event %s (seq %d after %d)", e.ID, e.Seq, last)
		}
		seen[e.ID], last = true, e.Seq
	}
	for _, env := range envs {
		if !seen[env.ID] {
			t.Fatalf("the stream of b missed %s", env.ID)
		}
	}

	sessions := map[string]bool{}
	for _, env := range envs {
		var p struct {
			SessionID string `json:"session_id"`
		}
		json.Unmarshal(env.Payload, &p)
		if p.SessionID != "" {
			sessions[p.SessionID] = true
		}
	}
	waitModeled(t, sessions, a, b)
	leader, other := a, b
	if leaders(t, a, b) != "a" {
		leader, other = b, a
	}
	// The holder applied the events as they came, not only by loading
	// stale sessions.
	if got := metric(t, leader, "hookwatch_model_events_applied_total"); got == "0" {
		t.Errorf("the lease holder applied %s events", got)
	}
	if got := metric(t, leader, "hookwatch_model_errors_total"); got != "0" {
		t.Errorf("the lease holder had %s errors", got)
	}

	// The leader goes; the other takes the lease and models what comes.
	leader.Shutdown(context.Background())
	more := []event.Envelope{synth(1e6, "session_id", "shared-2", "hook_event_name", "SessionStart", "cwd", "/p", "source", "startup"),
		synth(1e6+1, "session_id", "shared-2", "hook_event_name", "UserPromptSubmit", "cwd", "/p", "prompt", "hi")}
	other.post(t, more, 2, 0)
	waitModeled(t, map[string]bool{"shared-2": true}, other)
	if got := metric(t, other, "hookwatch_model_leader"); got != "1" {
		t.Fatalf("the remaining collector does not hold the lease: %q", got)
	}
}

// waitModeled waits until every server serves the model of every session
// computed from all of its events.
func waitModeled(t *testing.T, sessions map[string]bool, servers ...*testServer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for id := range sessions {
		for i, s := range servers {
			for {
				var v struct {
					LastSeq    int64 `json:"last_seq"`
					DerivedSeq int64 `json:"derived_seq"`
				}
				code, body := s.do(t, http.MethodGet, "/v1/sessions/"+id, nil)
				if code == http.StatusOK {
					json.Unmarshal(body, &v)
				}
				if code == http.StatusOK && v.DerivedSeq == v.LastSeq {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("server %d: the model of %s is not up to date: %d %s", i, id, code, body)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
}

// holderAndStandby starts two collectors on the database at url and
// returns them once one holds the model's lease: the holder first. Each
// counts the model rows it reads from the store (testServer.reads).
func holderAndStandby(t *testing.T, url string) (holder, standby *testServer) {
	t.Helper()
	ra, rb := &rowReads{DB: postgres.MustOpenDB(t, url)}, &rowReads{DB: postgres.MustOpenDB(t, url)}
	a, b := newServerOn(t, collector.Config{}, ra), newServerOn(t, collector.Config{}, rb)
	a.reads, b.reads = ra, rb
	deadline := time.Now().Add(30 * time.Second)
	for metric(t, a, "hookwatch_model_leader") == metric(t, b, "hookwatch_model_leader") {
		if time.Now().After(deadline) {
			t.Fatal("no collector took the model's lease")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if leaders(t, a, b) != "a" {
		return b, a
	}
	return a, b
}

// rowReads is a PostgreSQL store that counts the agent and call rows read
// through it.
type rowReads struct {
	*postgres.DB
	rows atomic.Int64
}

func (r *rowReads) Agents(ctx context.Context, f store.AgentFilter) (store.AgentPage, error) {
	p, err := r.DB.Agents(ctx, f)
	r.rows.Add(int64(len(p.Agents)))
	return p, err
}

func (r *rowReads) ToolCalls(ctx context.Context, f store.ToolCallFilter) (store.ToolCallPage, error) {
	p, err := r.DB.ToolCalls(ctx, f)
	r.rows.Add(int64(len(p.ToolCalls)))
	return p, err
}

// leaders returns which of a and b computes the model, failing unless
// exactly one does.
func leaders(t *testing.T, a, b *testServer) string {
	t.Helper()
	la, lb := metric(t, a, "hookwatch_model_leader"), metric(t, b, "hookwatch_model_leader")
	switch {
	case la == "1" && lb == "0":
		return "a"
	case la == "0" && lb == "1":
		return "b"
	}
	t.Fatalf("hookwatch_model_leader is %q on a and %q on b, want one leader", la, lb)
	return ""
}

// metric returns the value of an unlabelled metric on /metrics.
func metric(t *testing.T, s *testServer, name string) string {
	t.Helper()
	code, body := s.do(t, http.MethodGet, "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	t.Fatal(fmt.Sprintf("no %s on /metrics", name))
	return ""
}

// TestSharedHolderAppliesLive: the lease holder applies the events it
// commits itself as they commit, without reading them back from the log,
// and those another collector commits from the log as they are announced;
// every event once.
func TestSharedHolderAppliesLive(t *testing.T) {
	url := pgtest.NewDatabase(t)
	holder, other := holderAndStandby(t, url)
	deadline := time.Now().Add(30 * time.Second)
	sessions := map[string]bool{}
	sessionsOf := func(prefix string, base int) []event.Envelope {
		var out []event.Envelope
		for i := range 5 {
			id := fmt.Sprint(prefix, i)
			sessions[id] = true
			ms := base + 10*i
			out = append(out,
				synth(ms, "session_id", id, "hook_event_name", "SessionStart", "cwd", "/p/"+id, "source", "startup"),
				synth(ms+1, "session_id", id, "hook_event_name", "UserPromptSubmit", "cwd", "/p/"+id, "prompt", "hi"),
				synth(ms+2, "session_id", id, "hook_event_name", "Stop", "cwd", "/p/"+id))
		}
		return out
	}
	own, others := sessionsOf("live-own-", 0), sessionsOf("live-other-", 1000)
	holder.post(t, own, len(own), 0)
	other.post(t, others, len(others), 0)
	more := sessionsOf("live-own-late-", 2000)
	holder.post(t, more, len(more), 0)
	waitModeled(t, sessions, holder, other)

	want := map[string]string{
		"hookwatch_model_events_applied_total": fmt.Sprint(len(own) + len(others) + len(more)),
		"hookwatch_model_errors_total":         "0",
	}
	for name, v := range want {
		for got := metric(t, holder, name); got != v; got = metric(t, holder, name) {
			if time.Now().After(deadline) {
				t.Fatalf("the lease holder's %s is %s, want %s", name, got, v)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The other's events are read from the log, each once. The holder's
	// own are not, but for those a read of the log, woken by the
	// notification of their commit, met before the writer handed them
	// over (mark takes them as read then): on a loaded machine, some of
	// one commit's.
	read, _ := strconv.Atoi(metric(t, holder, "hookwatch_model_events_read_total"))
	if read < len(others) || read > len(others)+max(len(own), len(more)) {
		t.Fatalf("the lease holder read %d events from the log, want the other's %d and at most one commit of its own more", read, len(others))
	}
	// The standby applies every event too, to its memory: it reads the
	// holder's from the log.
	for got := metric(t, other, "hookwatch_model_events_read_total"); got != fmt.Sprint(len(own)+len(more)); got = metric(t, other, "hookwatch_model_events_read_total") {
		if time.Now().After(deadline) {
			t.Fatalf("the standby read %s events of the holder from the log, want %d", got, len(own)+len(more))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := metric(t, other, "hookwatch_model_rows_written_total"); got != "0" {
		t.Errorf("the standby wrote %s rows of the model", got)
	}
}

// TestSharedTakeoverFromMemory: the standby keeps the model in memory as
// the holder does; when the holder goes, it stores from memory the
// sessions whose stored model is stale, without loading them from the
// store.
// takeoverSetup starts two collectors on one database, posts the corpus to
// both and waits until the holder stored its model and the standby applied
// every event. It returns the database, the holder, the standby, the
// session with the most calls and its calls as the holder serves them.
func takeoverSetup(t *testing.T) (db *postgres.DB, holder, standby *testServer, stale string, want []string) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	db = postgres.MustOpenDB(t, url)
	holder, standby = holderAndStandby(t, url)
	deadline := time.Now().Add(30 * time.Second)
	envs := corpusEnvelopes(t)
	half := len(envs) / 2
	holder.post(t, envs[:half], half, 0)
	standby.post(t, envs[half:], len(envs)-half, 0)

	// The session with the most calls, and every session.
	sessions, calls, modeled := storedSessions(t, db)
	for id, n := range calls {
		if stale == "" || n > calls[stale] {
			stale = id
		}
	}
	waitModeled(t, sessions, holder, standby)
	waitStandbyHolds(t, standby, modeled, deadline)
	want = toolCalls(t, holder, stale)
	if len(want) == 0 {
		t.Fatalf("session %s has no calls", stale)
	}
	return db, holder, standby, stale, want
}

func TestSharedTakeoverFromMemory(t *testing.T) {
	db, holder, standby, stale, want := takeoverSetup(t)

	// What the holder had not stored when it ended: a stale model.
	ctx := context.Background()
	if _, err := db.Pool().Exec(ctx, `UPDATE model_sessions SET seq = 0 WHERE session_id = $1`, []byte(stale)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `DELETE FROM model_tool_calls WHERE session_id = $1`, []byte(stale)); err != nil {
		t.Fatal(err)
	}
	loads := metric(t, standby, "hookwatch_model_group_loads_total")
	holder.Shutdown(ctx)
	waitModeled(t, map[string]bool{stale: true}, standby)
	if got := toolCalls(t, standby, stale); !slices.Equal(got, want) {
		t.Fatalf("the calls of %s after the takeover:\n%v\nwant\n%v", stale, got, want)
	}
	if got := metric(t, standby, "hookwatch_model_group_loads_total"); got != loads {
		t.Errorf("the new holder loaded groups from the store to take over: %s loads, %s before", got, loads)
	}
	if got := metric(t, standby, "hookwatch_model_leader"); got != "1" {
		t.Fatalf("the standby does not hold the lease: %q", got)
	}
}

// TestSharedTakeoverWritesOnlyUnstored: the holder ends having stored its
// model up to a point and not the events after it; the new holder writes
// of the stale session the rows those events changed, from memory, and
// reads none back from the store: a row stored as the model has it keeps
// its updated_seq, and the takeover costs what changed, not the session's
// size.
func TestSharedTakeoverWritesOnlyUnstored(t *testing.T) {
	db, holder, standby, stale, want := takeoverSetup(t)
	if len(want) < 3 {
		t.Fatalf("session %s has %d calls, want 3 or more", stale, len(want))
	}
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Pool().Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	tables := []string{"model_sessions", "model_agents", "model_tool_calls"}
	// The model as the holder stored it so far.
	for _, tbl := range tables {
		exec(`CREATE TABLE stored_` + tbl + ` AS SELECT * FROM ` + tbl)
	}
	before := rowVersions(t, db, stale)

	// A call of the stale session after everything so far, which the
	// holder models and the standby applies.
	s, err := db.Session(ctx, stale)
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int, kv ...any) event.Envelope {
		return synth(ms, append([]any{"session_id", stale, "cwd", s.CWD, "transcript_path", s.TranscriptPath}, kv...)...)
	}
	more := []event.Envelope{
		at(1e6, "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_use_id", "toolu_takeover", "tool_input", map[string]any{"command": "ls"}),
		at(1e6+1, "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_use_id", "toolu_takeover", "tool_input", map[string]any{"command": "ls"},
			"tool_response", map[string]any{"stdout": "a\nb"}),
	}
	_, _, modeled := storedSessions(t, db)
	holder.post(t, more, len(more), 0)
	waitModeled(t, map[string]bool{stale: true}, holder)
	waitStandbyHolds(t, standby, modeled+len(more), time.Now().Add(30*time.Second))
	want = toolCalls(t, holder, stale)
	if !slices.Contains(want, "toolu_takeover ok") {
		t.Fatalf("the holder's calls of %s lack the new one: %v", stale, want)
	}
	changed := 0 // rows the call wrote
	for k, v := range rowVersions(t, db, stale) {
		if before[k] != v {
			changed++
		}
	}

	// The holder ends having stored none of it.
	for _, tbl := range tables {
		exec(`DELETE FROM ` + tbl)
		exec(`INSERT INTO ` + tbl + ` SELECT * FROM stored_` + tbl)
	}
	reads := standby.reads.rows.Load()
	holder.Shutdown(ctx)
	// Read from the database, not through the standby, which would read
	// rows of the model.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var current bool
		err := db.Pool().QueryRow(ctx, `SELECT m.seq >= s.last_seq FROM model_sessions m JOIN sessions s ON s.id = m.session_id
			WHERE m.session_id = $1`, []byte(stale)).Scan(&current)
		if err != nil {
			t.Fatal(err)
		}
		if current {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the standby did not store the stale session's model")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := standby.reads.rows.Load() - reads; got != 0 {
		t.Errorf("the takeover read %d rows of the model back from the store", got)
	}
	if n, _ := strconv.Atoi(metric(t, standby, "hookwatch_model_restated_rows_total")); n == 0 || n > changed {
		t.Errorf("the takeover restated %d rows, want 1 to %d: those the new call changed", n, changed)
	}
	waitModeled(t, map[string]bool{stale: true}, standby)
	if got := toolCalls(t, standby, stale); !slices.Equal(got, want) {
		t.Fatalf("the calls of %s after the takeover:\n%v\nwant\n%v", stale, got, want)
	}
	for k, v := range rowVersions(t, db, stale) {
		if w, ok := before[k]; ok && w != v && k != "call toolu_takeover" && !strings.HasPrefix(k, "agent ") {
			t.Errorf("the takeover wrote %s again, stored as the model has it (updated_seq %d, was %d)", k, v, w)
		}
	}
}

// rowVersions returns the updated_seq of each agent and call row of session
// id, by "agent <id>" and "call <tool_use_id>".
func rowVersions(t *testing.T, db *postgres.DB, id string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	rows, err := db.Pool().Query(context.Background(), `SELECT 'call '||encode(tool_use_id, 'escape'), updated_seq FROM model_tool_calls WHERE session_id = $1
		UNION ALL SELECT 'agent '||encode(agent_id, 'escape'), updated_seq FROM model_agents WHERE session_id = $1`, []byte(id))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// toolCalls lists the calls of a session: tool_use_id and status.
func toolCalls(t *testing.T, s *testServer, id string) []string {
	t.Helper()
	var page collector.ToolCallsResponse
	s.getJSON(t, "/v1/sessions/"+id+"/tool-calls?limit=1000", &page)
	var out []string
	for _, raw := range page.ToolCalls {
		var c struct {
			ToolUseID string `json:"tool_use_id"`
			Status    string `json:"status"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c.ToolUseID+" "+c.Status)
	}
	return out
}

// TestSharedStandbyPacesLoads: a standby that meets many groups at once
// loads a few of them a round and leaves the events of the others to their
// load, which the next rounds make; it ends holding every group, and the
// model it stores when it takes over is the holder's.
func TestSharedStandbyPacesLoads(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := postgres.MustOpenDB(t, url)
	holder, standby := holderAndStandby(t, url)
	deadline := time.Now().Add(30 * time.Second)
	envs := corpusEnvelopes(t)
	holder.post(t, envs, len(envs), 0)
	sessions, _, modeled := storedSessions(t, db)
	waitModeled(t, sessions, holder)
	deferred := waitStandbyHolds(t, standby, modeled, deadline)
	if deferred == 0 {
		t.Errorf("the standby deferred no event")
	}
	groups, loads := metric(t, holder, "hookwatch_model_group_loads_total"), metric(t, standby, "hookwatch_model_group_loads_total")
	if n, _ := strconv.Atoi(groups); n <= 4 {
		t.Fatalf("the corpus has %d groups, too few to pace", n)
	}
	if loads != groups {
		t.Errorf("the standby loaded %s groups, the holder %s: a standby holds every group in the end", loads, groups)
	}
	want := map[string][]string{}
	for id := range sessions {
		want[id] = toolCalls(t, holder, id)
	}
	// The holder ended having stored nothing.
	ctx := context.Background()
	for _, q := range []string{`UPDATE model_sessions SET seq = 0`, `DELETE FROM model_tool_calls`, `DELETE FROM model_agents`} {
		if _, err := db.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	holder.Shutdown(ctx)
	waitModeled(t, sessions, standby)
	for id := range sessions {
		if got := toolCalls(t, standby, id); !slices.Equal(got, want[id]) {
			t.Errorf("the calls of %s after the takeover:\n%v\nwant\n%v", id, got, want[id])
		}
	}
}

// waitStandbyHolds waits until the standby has taken every one of the
// modeled events committed, applied as it came or left to its group's
// load, and has loaded every group it left: it then holds all of them in
// memory. It returns how many events it left to a load.
func waitStandbyHolds(t *testing.T, standby *testServer, modeled int, deadline time.Time) (deferred int) {
	t.Helper()
	for {
		applied, _ := strconv.Atoi(metric(t, standby, "hookwatch_model_events_applied_total"))
		deferred, _ = strconv.Atoi(metric(t, standby, "hookwatch_model_events_deferred_total"))
		groups := metric(t, standby, "hookwatch_model_deferred_groups")
		if applied+deferred > modeled {
			t.Fatalf("the standby applied %d events and deferred %d, of %d", applied, deferred, modeled)
		}
		if applied+deferred == modeled && groups == "0" {
			return deferred
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby applied %d events and deferred %d, want %d in all; %s groups not loaded", applied, deferred, modeled, groups)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// storedSessions reads the events stored in db (one page): the sessions
// they are of, the calls' events per session, and how many the model takes
// (those with a session).
func storedSessions(t *testing.T, db *postgres.DB) (sessions map[string]bool, calls map[string]int, modeled int) {
	t.Helper()
	page, err := db.Events(context.Background(), store.EventFilter{Limit: store.MaxLimit})
	if err != nil || page.Next != "" {
		t.Fatalf("the corpus: %v, more than a page", err)
	}
	sessions, calls = map[string]bool{}, map[string]int{}
	for _, e := range page.Events {
		if e.SessionID != "" {
			sessions[e.SessionID] = true
			modeled++
			if e.ToolUseID != "" {
				calls[e.SessionID]++
			}
		}
	}
	return sessions, calls, modeled
}

// TestSharedRestartAfterCrash: a collector dies after committing events of
// a session and before its model round (SIGKILL: no model row for them);
// the collector started after it follows the log as a standby while the
// lease is not free yet, loads the session's group for another session of
// its project, then meets new events of the first session; when it takes
// the lease, the model it stores of that session has every event the log
// holds, those the dead collector committed included, as a collector given
// every event derives it.
func TestSharedRestartAfterCrash(t *testing.T) {
	// dead: committed by the collector that died.
	dead, other, after := goesOn("crash-a", "crash-b", 60_000, 70_000)
	ref := newServer(t, collector.Config{})
	ref.post(t, slices.Concat(dead, other, after), len(dead)+len(other)+len(after), 0)
	want := derivedView(t, ref)

	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	db := postgres.MustOpenDB(t, url)
	events := make([]store.Event, len(dead))
	for i, e := range dead {
		events[i] = storetest.MustEvent(t, e)
	}
	if _, err := db.Insert(ctx, events); err != nil {
		t.Fatal(err)
	}
	// The lease is not free yet when the new collector starts.
	lctx, release := context.WithCancel(ctx)
	defer release()
	if _, err := postgres.MustOpenDB(t, url).Lead(lctx, nil); err != nil {
		t.Fatal(err)
	}
	s := newServerOn(t, patient, postgres.MustOpenDB(t, url))
	applied := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for got := metric(t, s, "hookwatch_model_events_applied_total"); got != fmt.Sprint(n); got = metric(t, s, "hookwatch_model_events_applied_total") {
			if time.Now().After(deadline) {
				t.Fatalf("the standby applied %s events, want %d", got, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	s.post(t, other, len(other), 0)
	applied(len(other))
	s.post(t, after, len(after), 0)
	applied(len(other) + len(after))
	if got := metric(t, s, "hookwatch_model_leader"); got != "0" {
		t.Fatalf("the collector holds the lease before it is free: %s", got)
	}
	release()
	if got := derivedView(t, s); got != want {
		t.Fatalf("the model after the restart:\n%s\nwant, given every event:\n%s", got, want)
	}
}

// TestSharedStaleThenLive is TestDeriveStaleThenLive on PostgreSQL: the
// collector takes the lease at its start, after a collector died having
// committed events it never modelled.
func TestSharedStaleThenLive(t *testing.T) {
	checkStaleThenLive(t, postgres.MustOpenDB(t, pgtest.NewDatabase(t)))
}

// TestSharedStandbySaysSo: a collector that finds another holding the
// model's lease logs that it is a standby, once, and the holder does not.
func TestSharedStandbySaysSo(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var la, lb syncbuf.Buffer
	a := newServerOn(t, collector.Config{Logger: slog.New(slog.NewTextHandler(&la, nil))}, postgres.MustOpenDB(t, url))
	b := newServerOn(t, collector.Config{Logger: slog.New(slog.NewTextHandler(&lb, nil))}, postgres.MustOpenDB(t, url))
	const standby = "level=INFO msg=\"standby:"
	deadline := time.Now().Add(30 * time.Second)
	for metric(t, a, "hookwatch_model_leader") == metric(t, b, "hookwatch_model_leader") ||
		!strings.Contains(la.String()+lb.String(), standby) {
		if time.Now().After(deadline) {
			t.Fatalf("no collector took the model's lease and the other said it waits:\na:\n%s\nb:\n%s", la.String(), lb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2500 * time.Millisecond) // past a retry of the lease or two
	holder, other := &la, &lb
	if leaders(t, a, b) == "b" {
		holder, other = &lb, &la
	}
	if n := strings.Count(other.String(), standby); n != 1 {
		t.Errorf("the standby said %d times that it is one, want once:\n%s", n, other.String())
	}
	if strings.Contains(holder.String(), standby) {
		t.Errorf("the holder says it is a standby:\n%s", holder.String())
	}
}
