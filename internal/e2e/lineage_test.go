package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/internal/testbin"
)

// TestLineageInstallModes plays the Lifecycle — a session, its resume, a
// fork (--resume X --fork-session), a /compact and a continue (-c) — with
// hooks installed by `hookwatch install`, once in command mode and once in
// http mode, each against a collector of its own. Events come through
// different paths (http hooks post raw payloads to /v1/hooks/claude, which
// SessionStart cannot use), but the two collectors must derive the same
// model: the sessions with their lineage, the agents and the tool calls,
// as the API serves them, equal once the ids and times that differ from
// run to run are replaced. And the fork is linked to its session in both.
func TestLineageInstallModes(t *testing.T) {
	Clients(t) // skip (or fail in CI) before building anything
	hookwatch := testbin.Build(t, "./cmd/hookwatch")
	EachClient(t, func(t *testing.T, c Client) { testLineageInstallModes(t, c, hookwatch) })
}

func testLineageInstallModes(t *testing.T, c Client, hookwatch string) {
	// The two modes run in parallel: each writes only its own element
	// (unsynchronised writes to one map could abort the test binary).
	modes := []string{"command", "http"}
	models := make([]any, len(modes))
	t.Run("modes", func(t *testing.T) {
		for i, mode := range modes {
			t.Run(mode, func(t *testing.T) {
				t.Parallel()
				a := installedEnv(t, c, hookwatch, mode)
				lc := a.PlayLifecycle(Lifecycle())
				ids := a.settle()
				id, forked := lc.Start.SessionID, lc.Fork.SessionID
				if fork := a.c.session(t, forked); fork.ParentSessionID != id || fork.Lineage != "fork" {
					t.Errorf("%s mode: the fork %s is not linked to %s: parent %q lineage %q", mode, forked, id,
						fork.ParentSessionID, fork.Lineage)
				}
				if main := a.c.session(t, id); !slices.Contains(main.ChildSessionIDs, forked) {
					t.Errorf("%s mode: session %s does not list its fork %s: %v", mode, id, forked, main.ChildSessionIDs)
				}
				models[i] = a.model(ids, id, forked)
			})
		}
	})
	if t.Failed() {
		return
	}
	cmd, http := models[0], models[1]
	if !reflect.DeepEqual(cmd, http) {
		c, _ := json.MarshalIndent(cmd, "", " ")
		h, _ := json.MarshalIndent(http, "", " ")
		t.Fatalf("the two modes derived different models:\n%s", lineDiff(string(c), string(h)))
	}
}

// installedEnv is a client installation whose hooks `hookwatch install
// --mode mode` registered, delivering to a collector of its own, with the
// recorder registered beside them.
func installedEnv(t *testing.T, cl Client, hookwatch, mode string) *attrEnv {
	t.Helper()
	c := startCollector(t)
	rec := filepath.Join(t.TempDir(), "events.jsonl")
	a := &attrEnv{t: t, c: c, rec: rec}
	a.Env = New(t, cl, Hook{Command: "/bin/true"},
		"HOOKWATCH_URL="+c.url, "HOOKWATCH_HOME="+c.home, "HOOKWATCH_AUTOSTART=0", "HOOKWATCH_E2E_RECORD="+rec)
	writeFile(t, a.Settings, `{"skipWebFetchPreflight": true}`+"\n")
	cmd := exec.Command(hookwatch, "install", "--scope", "user", "--mode", mode, "--url", c.url)
	cmd.Env = a.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hookwatch install --mode %s: %v\n%s", mode, err, out)
	}
	if b, _ := os.ReadFile(a.Settings); mode == "http" && !strings.Contains(string(b), "/v1/hooks/claude") {
		t.Fatalf("http install registers no http hook:\n%s", b)
	}
	addRecorder(t, a.Settings)
	return a
}

// model returns what the API serves about the sessions ids — each
// session, its agents and its tool calls — with the ids of this run
// (sessions, agents, tool calls) replaced by placeholders numbered in order
// of appearance, the project's paths by names, and times, durations and
// sequence numbers (which differ from run to run) removed.
func (a *attrEnv) model(ids []string, id, forked string) any {
	t := a.t
	t.Helper()
	// The main session and the fork first, then the others in the order
	// the client used them. Whether a continue's InstructionsLoaded comes
	// under a throwaway id or under the continued one is the client's
	// timing (spec/real-client.md), and varies from run to run in either
	// mode (seen on a loaded machine). Folded into the continued session,
	// its events count in that session's model all the same: a throwaway
	// id reads as that session, the events stored under it count in that
	// session's event_count, and what only tells whether there was one is
	// left out (see volatile).
	main := a.c.session(t, id)
	order := []string{id, forked}
	for _, other := range ids {
		if !slices.Contains(order, other) && !slices.Contains(main.AliasSessionIDs, other) {
			order = append(order, other)
		}
	}
	z := &normalizer{ids: map[string]string{}, paths: []string{a.Project, "<project>", a.Home, "<home>",
		claudecode.Slug(a.Project), "<project-slug>"}}
	for i, s := range order {
		z.ids[s] = fmt.Sprintf("<session-%d>", i)
	}
	var folded int64
	for _, alias := range main.AliasSessionIDs {
		z.ids[alias] = z.ids[id]
		folded += a.c.session(t, alias).EventCount
	}
	var out []any
	for _, s := range order {
		var session, agents, calls any
		a.c.mustGet(t, "/v1/sessions/"+url.PathEscape(s), &session)
		if m, ok := session.(map[string]any); ok && s == id {
			n, _ := m["event_count"].(float64)
			m["event_count"] = n + float64(folded)
		}
		a.c.mustGet(t, "/v1/sessions/"+url.PathEscape(s)+"/agents", &agents)
		a.c.mustGet(t, "/v1/sessions/"+url.PathEscape(s)+"/tool-calls?limit=1000", &calls)
		out = append(out, map[string]any{"session": z.value(session), "agents": z.value(agents), "tool_calls": z.value(calls)})
	}
	return out
}

// normalizer rewrites an API answer into what two runs of the same
// scenario must agree on.
type normalizer struct {
	ids   map[string]string // an id of this run → its placeholder
	paths []string          // old, new pairs for strings.NewReplacer
	n     map[string]int    // placeholders given, by kind
}

// runIDs are the ids a run makes up besides its sessions': agent ids,
// tool_use ids, and the client's UUIDs (prompt ids).
var runIDs = regexp.MustCompile(`\btoolu_[A-Za-z0-9]+|\ba[0-9a-f]{16}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)

func (z *normalizer) value(v any) any {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := map[string]any{}
		for _, k := range keys {
			if volatile(k) {
				continue
			}
			out[k] = z.value(v[k])
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = z.value(e)
		}
		return out
	case string:
		return z.str(v)
	}
	return v
}

// volatile reports whether a member differs between two runs of the same
// scenario: times, durations, sequence numbers, cursors, the context size
// and idle time the client reports (2.1.332 and later; the size follows the
// length of the run's temporary paths), and whether a continue used a
// throwaway id: the aliases.
func volatile(key string) bool {
	return strings.HasSuffix(key, "_at") || strings.HasSuffix(key, "seq") || strings.HasSuffix(key, "_ms") ||
		key == "time" || key == "at" || key == "next_cursor" || key == "elapsed" || key == "context_tokens" ||
		key == "seconds_since_last_response" || key == "alias_session_ids" || key == "alias_session_id"
}

func (z *normalizer) str(s string) string {
	s = strings.NewReplacer(z.paths...).Replace(s)
	for id, p := range z.ids {
		s = strings.ReplaceAll(s, id, p)
	}
	return runIDs.ReplaceAllStringFunc(s, func(id string) string {
		if p, ok := z.ids[id]; ok {
			return p
		}
		kind := "agent"
		switch {
		case strings.HasPrefix(id, "toolu_"):
			kind = "tool"
		case strings.Count(id, "-") == 4:
			kind = "uuid"
		}
		if z.n == nil {
			z.n = map[string]int{}
		}
		z.n[kind]++
		p := fmt.Sprintf("<%s-%d>", kind, z.n[kind])
		z.ids[id] = p
		return p
	})
}

// lineDiff shows the lines of a and b that differ, with a few around.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for i := 0; i < max(len(al), len(bl)); i++ {
		x, y := "", ""
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&out, "line %d\n  command: %s\n  http:    %s\n", i+1, x, y)
		}
	}
	return out.String()
}
