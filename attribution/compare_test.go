package attribution

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestFindBaseline: the baseline of two sessions along fork and compact
// lineage, on sessions written out as "id<kind<parent".
func TestFindBaseline(t *testing.T) {
	f := func(sessions, a, b, want string) {
		t.Helper()
		byID := map[string]*Session{}
		for i, s := range strings.Fields(sessions) {
			parts := strings.Split(s, "<")
			x := &Session{SessionID: parts[0], Title: "t-" + parts[0], StartedAt: at(i)}
			if len(parts) == 3 {
				x.Lineage, x.ParentSessionID = parts[1], parts[2]
			}
			byID[x.SessionID] = x
		}
		base, err := FindBaseline(byID[a], byID[b], func(id string) (*Session, error) { return byID[id], nil })
		if err != nil {
			t.Fatal(err)
		}
		got := "none"
		if base != nil {
			got = base.SessionID + " a:" + strings.Join(base.A.Via, ",") + " b:" + strings.Join(base.B.Via, ",")
		}
		if got != want {
			t.Errorf("%q, %s vs %s: %s, want %s", sessions, a, b, got, want)
		}
	}
	f("x y<fork<x", "x", "y", "x a: b:y")
	f("x y<fork<x", "y", "x", "x a:y b:")
	f("x y<fork<x z<fork<x", "y", "z", "x a:y b:z")
	f("x y<fork<x z<fork<y w<fork<x", "z", "w", "x a:y,z b:w")
	f("x y<compact<x z<fork<y", "x", "z", "x a: b:y,z")
	// A clear starts afresh: no baseline.
	f("x y<clear<x", "x", "y", "none")
	f("x y", "x", "y", "none")
	// Forks of a parent whose events were not captured share it.
	f("y<fork<gone z<fork<gone", "y", "z", "gone a:y b:z")
	// A cycle (hostile input) ends the walk.
	f("x<fork<y y<fork<x", "x", "y", "x a: b:y")
}

// TestCompareCapture compares the real 2.1.332 capture's session with its
// fork: the baseline is the session itself, the fork point the fork's
// start, and each side's figures are its model's.
func TestCompareCapture(t *testing.T) {
	res := Build(load2332(t))
	byID := map[string]*Session{}
	for _, s := range res.Sessions {
		byID[s.SessionID] = s
	}
	x, y := byID[capture2332X], byID[capture2332Y]
	base, err := FindBaseline(x, y, func(id string) (*Session, error) { return byID[id], nil })
	if err != nil || base == nil {
		t.Fatalf("baseline %v, %v", base, err)
	}
	if base.SessionID != capture2332X || len(base.A.Via) != 0 || base.A.ForkedAt != nil ||
		len(base.B.Via) != 1 || base.B.Via[0] != capture2332Y || base.B.Lineage != LineageFork || !base.B.ForkedAt.Equal(y.StartedAt) {
		t.Fatalf("baseline %+v", base)
	}
	c := Compare(SideOf(x), SideOf(y), base)
	if c.A.Counts != x.Counts || c.B.Counts != y.Counts || c.A.Shape.String() != "orchestrator-workers of depth 2" || c.B.Shape.String() != "single agent" ||
		c.A.Status != x.Status {
		t.Fatalf("sides %+v %+v", c.A, c.B)
	}
	// The rows add up to the model's counts, each call and subagent once.
	sum := func(rows []CountRow) (a, b int) {
		for _, r := range rows {
			a, b = a+r.A, b+r.B
		}
		return a, b
	}
	if a, b := sum(c.Tools); a != x.Counts.ToolCalls || b != y.Counts.ToolCalls {
		t.Errorf("tools %d, %d; calls %d, %d", a, b, x.Counts.ToolCalls, y.Counts.ToolCalls)
	}
	if a, _ := sum(c.Subtypes); a != x.Counts.ToolCalls {
		t.Errorf("subtypes %d; calls %d", a, x.Counts.ToolCalls)
	}
	if a, _ := sum(c.AgentTypes); a != x.Shape.Subagents {
		t.Errorf("agent types %d; subagents %d", a, x.Shape.Subagents)
	}
	for i := 1; i < len(c.Tools); i++ {
		if p, r := c.Tools[i-1], c.Tools[i]; p.A+p.B < r.A+r.B {
			t.Errorf("tools out of order: %v", c.Tools)
		}
	}
	files := map[string]FileUse{}
	for _, tc := range x.ToolCalls {
		for _, p := range tc.FilesRead {
			u := files[p]
			u.Read = true
			files[p] = u
		}
		for _, p := range tc.FilesWritten {
			u := files[p]
			u.Written = true
			files[p] = u
		}
	}
	if len(files) == 0 || len(c.Files) != len(files) {
		t.Fatalf("files %v, the calls touched %v", c.Files, files)
	}
	for _, r := range c.Files {
		if r.A != files[r.Path] || r.B != (FileUse{}) {
			t.Errorf("file %+v, want %+v on A only", r, files[r.Path])
		}
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	}
}

// TestCompareBounds: a side keeps at most maxNames subtypes and
// maxCompareFiles files, and counts what it leaves out (a session's tools
// come bounded in its Tools: TestToolsBound).
func TestCompareBounds(t *testing.T) {
	d := NewSide(&Session{SessionID: "s", StartedAt: time.Now()})
	for i := range maxNames + 50 {
		tc := &ToolCall{ToolName: "Bash"}
		tc.Subtype = "kind" + strings.Repeat("x", i)
		d.Call(tc)
	}
	for i := range maxCompareFiles + 7 {
		tc := &ToolCall{ToolName: "Read"}
		tc.FilesRead = []string{"/f/" + strings.Repeat("y", i)}
		d.Call(tc)
	}
	c := Compare(d, NewSide(&Session{SessionID: "t"}), nil)
	if len(c.Subtypes) != maxNames+1 || len(c.Files) != maxCompareFiles || c.FilesOmitted != 7 {
		t.Fatalf("%d subtype rows, %d files, %d omitted", len(c.Subtypes), len(c.Files), c.FilesOmitted)
	}
	for _, r := range c.Subtypes {
		if r.Name == OtherNames && r.A != 50+maxCompareFiles+7 {
			t.Errorf("others: %d", r.A)
		}
	}
}
