package collector_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// The 2.1.332 capture: a session with two turns of parallel subagents
// that delegate again, and its fork.
const (
	capture2332     = "74975720-1a50-4d17-9463-df6fabfdeb7c"
	capture2332Fork = "03760423-27f3-4a00-8d63-b14ec37ed695"
)

// fork2332 is the 2.1.332 capture in envelopes, 250 ms apart from start,
// as the hook sends them: the fork's SessionEnd names the parent the hook
// found in the fork's transcript (ForkOf).
func fork2332(t testing.TB, start time.Time) []event.Envelope {
	t.Helper()
	var out []event.Envelope
	for _, p := range storetest.Corpus(t) {
		if !strings.HasPrefix(p.Label, "claude-code-2.1.332.jsonl:") {
			continue
		}
		e := storetest.Envelope(p.Runtime, start.Add(time.Duration(len(out))*250*time.Millisecond), p.JSON)
		if pl, err := event.Decode(e.Payload); err == nil && pl.SessionID == capture2332Fork && pl.Name() == event.SessionEnd {
			e.ForkOf = capture2332
		}
		out = append(out, e)
	}
	return out
}

// TestCompareForks compares real forked sessions through a real collector
// over HTTP: the 2.1.332 capture and its fork (and the 2.1.197 one and
// its fork, linked by that client's other rule). The baseline is named,
// each side's figures are its session view's, the rows add up to its
// counts; sessions of no common baseline are refused unless asked for.
func TestCompareForks(t *testing.T) {
	s := newServer(t, patient)
	old := claudeCorpus(t)
	s.post(t, old, len(old), 0)
	envs := fork2332(t, storetest.At(0).Add(time.Hour))
	s.post(t, envs, len(envs), 0)
	views := map[string]collector.SessionView{}
	for _, v := range s.settle(t) {
		views[v.ID] = v
	}
	compare := func(a, b, query string) (int, collector.CompareResponse, string) {
		t.Helper()
		code, body := s.do(t, http.MethodGet, "/v1/sessions/"+a+"/compare/"+b+query, nil)
		var c collector.CompareResponse
		if code == http.StatusOK {
			if err := json.Unmarshal(body, &c); err != nil {
				t.Fatalf("%v in %s", err, body)
			}
		}
		return code, c, string(body)
	}
	f := func(base, fork, baseShape, forkShape string) {
		t.Helper()
		for _, swap := range []bool{false, true} {
			a, b := base, fork
			if swap {
				a, b = fork, base
			}
			code, c, body := compare(a, b, "")
			if code != http.StatusOK {
				t.Fatalf("compare %s %s: %d %s", a, b, code, body)
			}
			if c.Baseline == nil || c.Baseline.SessionID != base {
				t.Fatalf("compare %s %s: baseline %+v, want %s", a, b, c.Baseline, base)
			}
			forkSide, baseSide := c.Baseline.B, c.Baseline.A
			if swap {
				forkSide, baseSide = baseSide, forkSide
			}
			if len(baseSide.Via) != 0 || len(forkSide.Via) != 1 || forkSide.Via[0] != fork || forkSide.Lineage != attribution.LineageFork ||
				forkSide.ForkedAt == nil || !forkSide.ForkedAt.Equal(views[fork].FirstEventAt) {
				t.Errorf("compare %s %s: branches %+v / %+v", a, b, c.Baseline.A, c.Baseline.B)
			}
			for _, side := range []*attribution.Session{c.A, c.B} {
				v := views[side.SessionID]
				want := baseShape
				if side.SessionID == fork {
					want = forkShape
				}
				if side.Shape == nil || side.Shape.String() != want || v.Shape == nil || *v.Shape != *side.Shape {
					t.Errorf("%s: shape %v (view %v), want %s", side.SessionID, side.Shape, v.Shape, want)
				}
				if side.Counts != v.Counts || side.Status != v.Status || side.Title != v.Title {
					t.Errorf("%s: side %+v, view %+v", side.SessionID, side, v)
				}
			}
			var ta, tb int
			for _, r := range c.Tools {
				ta, tb = ta+r.A, tb+r.B
			}
			if ta != c.A.Counts.ToolCalls || tb != c.B.Counts.ToolCalls || ta+tb == 0 {
				t.Errorf("tool rows %d, %d; calls %d, %d", ta, tb, c.A.Counts.ToolCalls, c.B.Counts.ToolCalls)
			}
			if len(c.Files) == 0 {
				t.Errorf("compare %s %s: no files", a, b)
			}
		}
	}
	f(capture2332, capture2332Fork, "orchestrator-workers of depth 2", "single agent")
	f(corpusMain, corpusFork, "fan-out of 2", "single agent")

	want := func(a, b, query string, code int, msg string) {
		t.Helper()
		got, _, body := compare(a, b, query)
		if got != code || !strings.Contains(body, msg) {
			t.Errorf("compare %s %s%s: %d %s, want %d %q", a, b, query, got, body, code, msg)
		}
	}
	want(capture2332, corpusMain, "", http.StatusConflict, "share no baseline")
	want(capture2332Fork, corpusFork, "", http.StatusConflict, "unrelated=1")
	want(capture2332, capture2332, "", http.StatusBadRequest, "same session")
	want(capture2332, "sub--"+corpusExplore, "", http.StatusBadRequest, "subagent")
	want(capture2332, "no-such-session", "", http.StatusNotFound, "session no-such-session not found")
	want("no-such-session", capture2332, "", http.StatusNotFound, "session no-such-session not found")
	want(capture2332, corpusMain, "?unrelated=yes", http.StatusBadRequest, "unrelated")
	code, c, body := compare(capture2332, corpusMain, "?unrelated=1")
	if code != http.StatusOK || c.Baseline != nil || c.A.SessionID != capture2332 || c.B.SessionID != corpusMain {
		t.Fatalf("unrelated=1: %d %s", code, body)
	}
	// A throwaway id stands for the session it was folded into.
	code, c, body = compare(corpusThrowaway, corpusFork, "")
	if code != http.StatusOK || c.A.SessionID != corpusMain {
		t.Fatalf("throwaway id: %d %s", code, body)
	}
}
