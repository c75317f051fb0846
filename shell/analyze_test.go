package shell

import (
	"strings"
	"testing"
)

func TestPrograms(t *testing.T) {
	// f checks the program each step resolves to, with its effect.
	f := func(cmd string, want ...string) {
		t.Helper()
		a := Analyze(cmd, Options{Dir: "/w"})
		var got []string
		for _, s := range a.Steps {
			got = append(got, s.Program+":"+string(s.Effect))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%q: steps %q, want %q (reason %q)", cmd, got, want, a.Reason)
		}
	}
	f("sudo -u deploy env A=1 nice -n 5 rm -rf x", "rm:destructive")
	f("xargs -0 -n 1 rm", "rm:destructive")
	f("timeout --signal KILL 10 go test ./...", "go:execute_check")
	f("bash -lc 'git status'", "bash:read_only", "git:read_only")
	f("env -S 'rm -rf x'", "env:read_only", "rm:destructive")
	f("ls $(rm -rf x)", "rm:destructive", "ls:read_only")
	f("git -C /tmp/repo status", "git:read_only")
	f("git push", "git:network")
	f("npm run build && npm run lint", "npm:execute_check", "npm:execute_check")
	f("python -m pip install requests", "python:write")
	f("./scripts/deploy.sh", "deploy.sh:execute_check")
	f("ssh host ls", "ssh:network", "ls:read_only")
	f("a=$(date); echo $a", "date:read_only", "echo:read_only")
}

func TestSubtypes(t *testing.T) {
	f := func(cmd, want string) {
		t.Helper()
		if got := Analyze(cmd, Options{}).Subtype; got != want {
			t.Fatalf("%q: subtype %s, want %s", cmd, got, want)
		}
	}
	f("go test ./...", SubtypeRunTest)
	f("cd web && npm test", SubtypeRunTest)
	f("npm install x", SubtypeInstallDependency)
	f("pip install -r requirements.txt", SubtypeInstallDependency)
	f("git add . && git commit -m x", SubtypeGitCommit)
	f("git push origin main", SubtypeGitPush)
	f("go build ./... && go vet ./...", SubtypeRunBuild)
	f("golangci-lint run", SubtypeRunLint)
	f("cat main.go", SubtypeReadFile)
	f("ls -la", SubtypeListFiles)
	f("rg TODO", SubtypeSearch)
	f("curl https://example.com", SubtypeWebFetch)
	f("echo hi > a.txt", SubtypeModifyFile)
	f("rm a.txt", SubtypeDeleteFile)
	f("echo hi", SubtypeRunCommand)
	f("if then fi (", SubtypeUnknown)
}

func TestPathsAndHosts(t *testing.T) {
	a := Analyze("cat a.go < in.txt > out.txt; curl -o page.html https://example.com/x; scp f.txt user@backup.example.org:/srv/", Options{Dir: "/w"})
	if got := strings.Join(a.Reads, " "); got != "/w/a.go /w/in.txt /w/f.txt" {
		t.Fatalf("reads %q", got)
	}
	if got := strings.Join(a.Writes, " "); got != "/w/out.txt /w/page.html" {
		t.Fatalf("writes %q", got)
	}
	if got := strings.Join(a.Hosts, " "); got != "example.com backup.example.org" {
		t.Fatalf("hosts %q", got)
	}
}

// TestBounds: hostile input ends quickly as unknown, never hangs.
func TestBounds(t *testing.T) {
	f := func(name, cmd string) {
		t.Helper()
		a := Analyze(cmd, Options{})
		if !a.Unknown || a.Effect != Destructive {
			t.Fatalf("%s: effect %s, unknown %v, want an unknown destructive", name, a.Effect, a.Unknown)
		}
	}
	f("too long", strings.Repeat("ls; ", MaxInput/4+1))
	f("too many steps", strings.Repeat("ls;", MaxSteps+1))
	f("nested evals", strings.Repeat("eval ", maxDepth+2)+"ls")
	// Functions calling functions fan out: bounded work.
	var b strings.Builder
	b.WriteString("f0() { :; }\n")
	for i := 1; i < 12; i++ {
		b.WriteString("f" + itoa(i) + "() { " + strings.Repeat("f"+itoa(i-1)+"; ", 20) + "}\n")
	}
	b.WriteString("f11\n")
	f("function fan-out", b.String())
	f("recursion", "f() { f; }; f")
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func FuzzAnalyze(f *testing.F) {
	for _, e := range readCorpus(f) {
		f.Add(e.Command)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a := Analyze(cmd, Options{Dir: "/w"})
		if a.Effect.Rank() < 0 || a.Effect.Rank() > 4 || a.Subtype == "" {
			t.Fatalf("%q: effect %q subtype %q", cmd, a.Effect, a.Subtype)
		}
		if a.Unknown && a.Effect != Destructive {
			t.Fatalf("%q: unknown but %s", cmd, a.Effect)
		}
		if len(a.Steps) > MaxSteps {
			t.Fatalf("%q: %d steps", cmd, len(a.Steps))
		}
		checkWorst(t, cmd, a)
		checkAnalysisJSON(t, cmd, &a)
	})
}
