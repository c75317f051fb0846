package collector_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
)

// TestSignals reads the signals of the real 2.1.197 capture through the
// API: its main agent read main.go and its go vet failed, once each.
func TestSignals(t *testing.T) {
	s := newServer(t, patient)
	envs := claudeCorpus(t)
	s.post(t, envs, len(envs), 0)
	s.settle(t)
	kinds := func(path string) string {
		t.Helper()
		var r collector.SignalsResponse
		s.getJSON(t, path, &r)
		var out []string
		for _, a := range r.Agents {
			for _, sig := range a.Signals {
				out = append(out, a.AgentID+":"+sig.Kind+":"+sig.Detail)
			}
		}
		return strings.Join(out, "; ")
	}
	base := "/v1/sessions/" + corpusMain + "/signals"
	if got := kinds(base); got != "" {
		t.Fatalf("default thresholds raise %q", got)
	}
	got := kinds(base + "?read_repeats=1&failed_repeats=1")
	for _, want := range []string{
		":" + attribution.SignalLoop + ":read /home/dev/src/demo/main.go once",
		":" + attribution.SignalLoop + ":Bash go vet ./... 2>&1; exit 3 failed once",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("signals %q lack %q", got, want)
		}
	}
	if code, body := s.do(t, http.MethodGet, base+"?read_repeats=0", nil); code != http.StatusBadRequest {
		t.Fatalf("read_repeats=0: %d %s", code, body)
	}
	if code, _ := s.do(t, http.MethodGet, "/v1/sessions/nope/signals", nil); code != http.StatusNotFound {
		t.Fatalf("unknown session: %d", code)
	}
}
