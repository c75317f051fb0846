package matcher

import "testing"

// TestMatchSpecTable checks the rows of spec §1.4 one by one.
func TestMatchSpecTable(t *testing.T) {
	f := func(pattern, value string, want bool, opts ...Option) {
		t.Helper()
		m, err := Compile(pattern, opts...)
		if err != nil {
			t.Fatalf("Compile(%q): %v", pattern, err)
		}
		if got := m.Match(value); got != want {
			t.Fatalf("Compile(%q).Match(%q) = %v, want %v (kind %s)", pattern, value, got, want, m.Kind())
		}
	}

	// "*", "" or key omitted: match everything.
	f("*", "Bash", true)
	f("*", "", true)
	f("", "mcp__memory__create", true)
	f("", "", true)

	// Only [A-Za-z0-9_], '-', space, ',', '|': exact strings.
	f("Bash", "Bash", true)
	f("Bash", "bash", false) // case-sensitive
	f("Bash", "BashOutput", false)
	f("Edit", "NotebookEdit", false)
	f("Bash|Edit", "Edit", true)
	f("Bash|Edit", "Write", false)
	f("Write,Edit", "Edit", true) // ',' separator (≥2.1.191)
	f("Write, Edit", "Edit", true)
	f("Write | Edit", "Write", true) // whitespace around separators tolerated
	f(" Bash ", "Bash", true)
	f("Task|Agent", "Agent", true)
	f("general-purpose", "general-purpose", true) // hyphen is exact (≥2.1.195)
	f("general-purpose", "xgeneral-purposex", false)
	f("Explore, general-purpose", "general-purpose", true)
	f("mcp__memory", "mcp__memory__create_entities", false) // bare server prefix matches nothing
	f("startup|resume", "resume", true)
	f("startup|resume", "compact", false)

	// Any other character: unanchored JavaScript RegExp.test.
	f("Edit.*", "Edit", true)
	f("Edit.*", "NotebookEdit", true)
	f("^Edit$", "NotebookEdit", false)
	f("^Edit$", "Edit", true)
	f("mcp__memory__.*", "mcp__memory__create_entities", true)
	f("mcp__memory__.*", "mcp__github__list", false)
	f("Notebook", "NotebookEdit", false) // exact, not a substring search
	f("Note.", "NotebookEdit", true)     // regex: unanchored substring
	f("^my-plugin:reviewer$", "my-plugin:reviewer", true)
	f("my-plugin:reviewer", "my-plugin:reviewer-2", true) // colon ⇒ regex path, unanchored
	f("(Write|Edit)", "MultiEdit", true)
	f("^(Write|Edit)$", "MultiEdit", false)
	f(`mcp__\w+__read`, "mcp__fs__read_file", true)

	// JavaScript escapes translated to Go.
	f(`^\u0041gent$`, "Agent", true)
	f(`^\u{41}gent$`, "Agent", true)
	f(`a[^]b`, "a\nb", true)

	// FileChanged / StopFailure: narrower exact set [A-Za-z0-9_|].
	f("rate_limit|overloaded", "overloaded", true, Narrow())
	f("rate_limit|overloaded", "overloaded", true, ForEvent("StopFailure"))
	f("a-b", "xa-bx", true, Narrow())              // '-' makes it a regex there
	f("a-b", "xa-bx", false)                       // but exact elsewhere
	f("a,b", "a,b", true, ForEvent("FileChanged")) // ',' is a regex char, matches itself
	f("a,b", "a", false, ForEvent("FileChanged"))
	f("a,b", "a", true, ForEvent("PreToolUse"))
	f(".env|package.json", "package.json", true, ForEvent("FileChanged"))
	f("*", "anything", true, Narrow())
}

func TestCompileKinds(t *testing.T) {
	f := func(pattern string, want Kind, opts ...Option) {
		t.Helper()
		m, err := Compile(pattern, opts...)
		if err != nil {
			t.Fatalf("Compile(%q): %v", pattern, err)
		}
		if m.Kind() != want {
			t.Fatalf("Compile(%q).Kind() = %s, want %s", pattern, m.Kind(), want)
		}
		if m.String() != pattern {
			t.Fatalf("String() = %q, want %q", m.String(), pattern)
		}
	}
	f("", All)
	f("*", All)
	f("Bash", Exact)
	f("Bash|Edit,Write", Exact)
	f("my agent", Exact)
	f("a-b", Exact)
	f("a-b", Regexp, Narrow())
	f("a b", Regexp, Narrow())
	f("Edit.*", Regexp)
	f("mcp__x__.*", Regexp)
	f("a:b", Regexp)
	f("a\tb", Regexp) // a tab is not in the exact set
}

func TestCompileErrors(t *testing.T) {
	f := func(pattern string) {
		t.Helper()
		if _, err := Compile(pattern); err == nil {
			t.Fatalf("Compile(%q): want error", pattern)
		}
	}
	f("(")
	f("Edit(?=x)") // lookahead: valid JavaScript, unsupported by RE2
	f(`(a)\1`)     // backreference
	f("[")
}

func TestNames(t *testing.T) {
	f := func(pattern string, want ...string) {
		t.Helper()
		got := MustCompile(pattern).Names()
		if len(got) != len(want) {
			t.Fatalf("Names(%q) = %q, want %q", pattern, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("Names(%q) = %q, want %q", pattern, got, want)
			}
		}
	}
	f("Bash", "Bash")
	f("Bash | Edit", "Bash", "Edit")
	f("Bash,Edit|Write", "Bash", "Edit", "Write")
	f("Bash|", "Bash", "")
	f("Bash||Edit", "Bash", "Edit", "")
	f("Edit.*")
}

func TestZeroAndNever(t *testing.T) {
	var m Matcher
	if !m.Match("x") || m.Kind() != All {
		t.Fatal("zero Matcher must match everything")
	}
	n := Never("(")
	if n.Match("(") || n.Match("") || n.Kind() != None {
		t.Fatal("Never must match nothing")
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"", "*", "Bash|Edit", "Edit.*", `\u0041`, `\u{1F600}`, "[^]", "a,b", `\`, `\u{`, "[^"} {
		f.Add(s, "Bash")
	}
	f.Fuzz(func(t *testing.T, pattern, value string) {
		for _, narrow := range []bool{false, true} {
			var opts []Option
			if narrow {
				opts = append(opts, Narrow())
			}
			m, err := Compile(pattern, opts...)
			if err != nil {
				continue
			}
			_ = m.Match(value)
			if m.Kind() == Exact && m.Match(value) != containsName(m.Names(), value) {
				t.Fatalf("exact matcher %q disagrees with its names on %q", pattern, value)
			}
		}
	})
}

func containsName(names []string, v string) bool {
	for _, n := range names {
		if n == v {
			return true
		}
	}
	return false
}

func BenchmarkCompileMatch(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m, _ := Compile("Bash|Edit|Write")
		_ = m.Match("Write")
	}
}
