package policy

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
)

func TestGlobMatch(t *testing.T) {
	f := func(pattern, name, dir string, want bool) {
		t.Helper()
		if got, err := globMatch(pattern, name, dir); got != want || err != nil {
			t.Errorf("globMatch(%q, %q, %q) = %v, %v; want %v", pattern, name, dir, got, err, want)
		}
	}
	// Relative patterns with a '/' start from dir when the path is absolute.
	f("src/**/*.go", "/proj/src/main.go", "/proj", true)
	f("src/**/*.go", "/proj/src/a/b/main.go", "/proj", true)
	f("./src/*.go", "/proj/src/main.go", "/proj/", true)
	f("src/**/*.go", "/other/src/main.go", "/proj", false)
	f("src/**/*.go", "/proj/src/main.go", "", false) // no dir: stays relative
	f("src/*.go", "src/main.go", "/proj", true)      // both relative
	f("/abs/*.go", "/abs/x.go", "/proj", true)
	f("**/.env", "/home/dev/other/.env", "/proj", true) // "**" first: anywhere
	f("**/secrets/*", "/srv/secrets/k", "/proj", true)
	// Alternation.
	f("*.{go,rs}", "/p/main.rs", "", true)
	f("*.{go,rs}", "/p/main.py", "", false)
	f("{src,cmd}/**/*.{go,mod}", "/p/cmd/x/go.mod", "/p", true)
	f("a{b,c{d,e}}f", "acef", "", true)
	f("a{b,c{d,e}}f", "acf", "", false)
	f("{x}", "{x}", "", true)          // no comma: literal
	f("a{b", "a{b", "", true)          // unpaired: literal
	f(`a\{b,c}`, "a{b,c}", "", true)   // escaped
	f("[{]*", "{x", "", true)          // inside a bracket expression
	f("*.{go,}", "/p/main.", "", true) // an empty alternative
}

func TestCompileGlob(t *testing.T) {
	f := func(pattern string, want []string, wantErr string) {
		t.Helper()
		got, err := compileGlob(pattern)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("compileGlob(%q) = %q, %v; want an error with %q", pattern, got, err, wantErr)
			}
			return
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("compileGlob(%q) = %q, %v; want %q", pattern, got, err, want)
		}
	}
	f("*.{go,rs}", []string{"*.go", "*.rs"}, "")
	f("{a,b}{c,d}", []string{"ac", "ad", "bc", "bd"}, "")
	f("[", nil, "syntax error in pattern")
	f("src/[a-/x", nil, "syntax error in pattern")
	f("{[,b}", nil, "syntax error in pattern")
	f(strings.Repeat("{a,b}", 9), nil, "more than 256 alternatives")
}

// TestGlobRules: in a rule, a relative pattern starts from the project's
// directory for a project rule and from the event's cwd for a user rule; a
// broken literal pattern is a problem `policy check` reports; a broken
// pattern computed at run time is an error, handled per on_error.
func TestGlobRules(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	projFile := writeFile(t, proj, ".hookwatch/policy.yaml", `rules:
  - id: proj-go
    tool: Write
    when: 'glob("src/**/*.{go,rs}", tool_input.file_path)'
    action: deny
    reason: project rule
`)
	userFile := writeFile(t, filepath.Join(root, "home"), "policy.yaml", `rules:
  - id: user-docs
    tool: Write
    when: 'glob("docs/*.md", tool_input.file_path)'
    action: ask
  - id: dynamic
    tool: Write
    when: 'glob(tool_input.pattern ?? "x", tool_input.file_path)'
    action: deny
    on_error: closed
`)
	set := LoadSources(Source{Path: projFile, Scope: ScopeProject}, Source{Path: userFile, Scope: ScopeUser})
	if len(set.Problems) > 0 {
		t.Fatal(set.Problems)
	}
	f := func(cwd, file, pattern string, want decision.Verdict, wantRules ...string) {
		t.Helper()
		in := map[string]any{"file_path": file}
		if pattern != "" {
			in["pattern"] = pattern
		}
		p := map[string]any{"hook_event_name": "PreToolUse", "session_id": "s", "cwd": cwd, "tool_name": "Write", "tool_input": in}
		d := set.Evaluate(context.Background(), p, MemoryState())
		var ids []string
		if a := d.Audit(); a != nil {
			ids = a.RuleIDs
		}
		if d.Verdict != want || !slices.Equal(ids, wantRules) {
			t.Errorf("cwd %s, %s, pattern %q: %v %q, want %v %q", cwd, file, pattern, d.Verdict, ids, want, wantRules)
		}
	}
	// The project rule holds wherever the session works in the project.
	f(proj, filepath.Join(proj, "src", "main.go"), "", decision.Deny, "proj-go")
	f(filepath.Join(proj, "src"), filepath.Join(proj, "src", "a", "lib.rs"), "", decision.Deny, "proj-go")
	f(proj, filepath.Join(proj, "other", "src", "main.go"), "", decision.None)
	// The user rule starts from cwd.
	f(proj, filepath.Join(proj, "docs", "a.md"), "", decision.Ask, "user-docs")
	f(filepath.Join(proj, "sub"), filepath.Join(proj, "docs", "a.md"), "", decision.None)
	// A pattern computed at run time that is broken: the rule's on_error.
	f(proj, filepath.Join(proj, "x"), "[", decision.Deny, "dynamic")

	// policy test of the project's file takes patterns as the hook does.
	var out bytes.Buffer
	ev := `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"` + filepath.Join(proj, "sub") + `","tool_name":"Write","tool_input":{"file_path":"` + filepath.Join(proj, "src", "main.go") + `"}}` + "\n"
	if err := Test(&out, "", projFile, strings.NewReader(ev), false, CheckOptions{}); err != nil || !strings.Contains(out.String(), "1 denied") {
		t.Errorf("policy test %s: %v\n%s", projFile, err, out.String())
	}
	out.Reset()
	bad := writeFile(t, root, "bad.yaml", `rules:
  - id: bad-glob
    tool: Write
    when: 'glob("[", tool_input.file_path)'
    action: deny
  - id: bad-three
    tool: Write
    when: 'glob("src/{a,[}", tool_input.file_path, cwd)'
    action: deny
`)
	if err := Check(&out, bad); err == nil || !strings.Contains(out.String(), `bad.yaml:4: rule "bad-glob": cannot compile when: glob pattern "[": syntax error in pattern`) ||
		!strings.Contains(out.String(), `rule "bad-three": cannot compile when: glob pattern "src/{a,[}"`) {
		t.Errorf("policy check of broken glob patterns: %v\n%s", err, out.String())
	}
}

// FuzzGlob: brace expansion and matching never panic, stay bounded, and
// agree with compileGlob about which patterns are broken.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"*.{go,rs}", "src/**/*.go", "{a,{b,c}}[x-z]", `\{a,b}`, "[{]", "{", "}", "[", "a{b,c"} {
		f.Add(s, "/proj/src/main.go")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		alts, cerr := compileGlob(pattern)
		if len(alts) > maxGlobAlternatives {
			t.Fatalf("%d alternatives", len(alts))
		}
		_, err := globMatch(pattern, name, "/proj")
		if (err == nil) != (cerr == nil) {
			t.Fatalf("globMatch error %v, compileGlob error %v", err, cerr)
		}
	})
}
