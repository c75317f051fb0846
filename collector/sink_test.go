package collector_test

import (
	"context"
	"maps"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// recordingSink keeps what the collector offered it.
type recordingSink struct {
	mu      sync.Mutex
	calls   map[string]int // tool_use_id → times offered
	agents  map[string]int
	stopped bool
}

func newRecordingSink() *recordingSink {
	return &recordingSink{calls: map[string]int{}, agents: map[string]int{}}
}

func (r *recordingSink) Offer(changes []attribution.SessionChanges) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sc := range changes {
		for _, c := range sc.ToolCalls {
			r.calls[c.ToolUseID]++
		}
		for _, a := range sc.Agents {
			r.agents[a.AgentID]++
		}
	}
}

func (r *recordingSink) Stop(context.Context) {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
}

func (r *recordingSink) offered() (calls, agents []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.calls)), slices.Sorted(maps.Keys(r.agents))
}

// TestModelSink: a sink sees every call and agent of what was posted, and
// is stopped with the collector. After a restart, the first event of a
// session loads its group whole; the sink then sees only the rows that
// event touched, not the session again.
func TestModelSink(t *testing.T) {
	db := sqlite.MustOpenDB(t)
	path := db.Path()
	envs := claudeCorpus(t)
	start := func(db *sqlite.DB, sink *recordingSink) *testServer {
		cfg := patient
		cfg.Store, cfg.ModelSinks = db, []collector.ModelSink{sink}
		srv, err := collector.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s := &testServer{Server: srv, db: db, http: httptest.NewServer(srv.Handler())}
		t.Cleanup(s.http.Close)
		return s
	}

	first := newRecordingSink()
	s := start(db, first)
	s.post(t, envs[:len(envs)-1], len(envs)-1, 0)
	s.settle(t)
	var calls collector.ToolCallsResponse
	s.getJSON(t, "/v1/sessions/"+corpusMain+"/tool-calls?limit=1000", &calls)
	var agents collector.AgentsResponse
	s.getJSON(t, "/v1/sessions/"+corpusMain+"/agents", &agents)
	gotCalls, gotAgents := first.offered()
	if len(gotCalls) < len(calls.ToolCalls) || len(gotCalls) == 0 || len(gotAgents) < len(agents.Agents) {
		t.Fatalf("offered %d calls and %d agents; the session has %d and %d", len(gotCalls), len(gotAgents), len(calls.ToolCalls), len(agents.Agents))
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !first.stopped {
		t.Fatal("the sink was not stopped with the collector")
	}

	// The last event (the main agent's SessionEnd) after a restart.
	db2, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	second := newRecordingSink()
	s = start(db2, second)
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	s.post(t, envs[len(envs)-1:], 1, 0)
	s.settle(t)
	gotCalls, gotAgents = second.offered()
	if len(gotCalls) != 0 || !slices.Equal(gotAgents, []string{""}) {
		t.Fatalf("after a restart, the SessionEnd offered calls %v and agents %q; want only the main agent", gotCalls, gotAgents)
	}
}
