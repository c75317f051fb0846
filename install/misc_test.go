package install

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestServiceUnit(t *testing.T) {
	env := map[string]string{
		"HOOKWATCH_ADDR": "127.0.0.1:7421",
		"HOOKWATCH_DB":   `/home/me/odd "dir"/100%/hw.db`,
		"HOOKWATCH_HOME": "/home/me/.hookwatch",
		"BAD NAME":       "dropped",
		"":               "dropped",
	}
	f := func(goos, wantPath, goldenName string) {
		t.Helper()
		path, content := ServiceUnit(goos, "/home/me/go/bin/hookwatch $x", env)
		if path != wantPath {
			t.Errorf("%s: path %q; want %q", goos, path, wantPath)
		}
		if strings.Contains(string(content), "dropped") {
			t.Errorf("%s: an invalid variable name made it into the unit", goos)
		}
		golden(t, filepath.Join("service", goldenName), content)
	}
	f("linux", ".config/systemd/user/hookwatch.service", "hookwatch.service")
	f("darwin", "Library/LaunchAgents/io.github.hookwatch.serve.plist", "io.github.hookwatch.serve.plist")

	// launchd keeps no output of its own: the agent's goes to the log
	// a hook-started collector or forwarder writes, in the unit's home.
	for _, c := range []struct {
		unit func(string, string, map[string]string) (string, []byte)
		log  string
	}{{ServiceUnit, "/home/me/.hookwatch/serve.log"}, {ForwarderUnit, "/home/me/.hookwatch/forward.log"}} {
		_, plist := c.unit("darwin", "/usr/local/bin/hookwatch", env)
		for _, key := range []string{"StandardOutPath", "StandardErrorPath"} {
			if want := "<key>" + key + "</key>\n\t<string>" + c.log + "</string>"; !strings.Contains(string(plist), want) {
				t.Errorf("plist lacks %q:\n%s", want, plist)
			}
		}
	}
	_, plist := ServiceUnit("darwin", "/a&b/<hookwatch>", map[string]string{"HOOKWATCH_HOME": "/a&b"})
	if !strings.Contains(string(plist), "<string>/a&amp;b/serve.log</string>") {
		t.Errorf("the log's path is not escaped:\n%s", plist)
	}
	if err := xml.Unmarshal(plist, new(struct{})); err != nil {
		t.Errorf("plist is not XML: %v", err)
	}
	if p, c := ServiceUnit("windows", "hookwatch.exe", nil); p != "" || c != nil {
		t.Errorf("windows: %q %q; want nothing", p, c)
	}
}

func TestSystemdQuote(t *testing.T) {
	f := func(in string, exec bool, want string) {
		t.Helper()
		if got := systemdQuote(in, exec); got != want {
			t.Errorf("systemdQuote(%q, %v) = %s; want %s", in, exec, got, want)
		}
	}
	f("/usr/bin/hookwatch", true, `"/usr/bin/hookwatch"`)
	f(`/a b/"c"\d`, true, `"/a b/\"c\"\\d"`)
	f("100%$HOME", true, `"100%%$$HOME"`)
	f("K=100%$HOME", false, `"K=100%%$HOME"`)
}

// TestReadServiceUnit: what ServiceUnit and ForwarderUnit write reads back
// as written, every value that quoting or escaping changes included, and
// so do the golden units.
func TestReadServiceUnit(t *testing.T) {
	env := map[string]string{
		"HOOKWATCH_DB":    `/home/me/odd "dir"/100%/$HOME/a\b <&>.db`,
		"HOOKWATCH_TOKEN": "s3cret\ttab\nline 'q'",
		"EMPTY":           "",
		"GOGC":            "200",
	}
	for _, goos := range []string{"linux", "darwin"} {
		for command, unit := range map[string]func(string, string, map[string]string) (string, []byte){"serve": ServiceUnit, "forward": ForwarderUnit} {
			_, content := unit(goos, "/opt/my $bin/100%/hookwatch", env)
			got, err := ReadServiceUnit(goos, content)
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", goos, command, err, content)
			}
			want := InstalledService{Binary: "/opt/my $bin/100%/hookwatch", Command: command, Env: env}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: read %+v\nwant %+v", goos, command, got, want)
			}
		}
	}
	for goos, name := range map[string]string{"linux": "hookwatch.service", "darwin": "io.github.hookwatch.serve.plist"} {
		content, err := os.ReadFile(filepath.Join("testdata", "service", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadServiceUnit(goos, content)
		if err != nil || got.Binary != "/home/me/go/bin/hookwatch $x" || got.Env["HOOKWATCH_DB"] != `/home/me/odd "dir"/100%/hw.db` || len(got.Env) != 3 {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
}

// TestReadSystemdUnit: an Environment line as a hand may write it reads as
// systemd reads it; anything ServiceUnit would not write back as it was
// is an error.
func TestReadSystemdUnit(t *testing.T) {
	_, unit := ServiceUnit("linux", "/usr/bin/hookwatch", map[string]string{"HOOKWATCH_DB": "/a.db"})
	with := func(lines string) string {
		return strings.Replace(string(unit), "Restart=", lines+"\nRestart=", 1)
	}
	f := func(content string, want map[string]string) {
		t.Helper()
		got, err := ReadServiceUnit("linux", []byte(content))
		if err != nil || !reflect.DeepEqual(got.Env, want) {
			t.Errorf("read %v, %v; want %v\n%s", got.Env, err, want, content)
		}
	}
	f(string(unit), map[string]string{"HOOKWATCH_DB": "/a.db"})
	f(with(`Environment=A=1 "B=2 3" 'C=$4' D="5"6 E=%%7 F="\s\\"`), map[string]string{"HOOKWATCH_DB": "/a.db", "A": "1", "B": "2 3", "C": "$4", "D": "56", "E": "%7", "F": ` \`})
	f(with("Environment=\nEnvironment=A=1"), map[string]string{"A": "1"}) // an empty assignment resets the list
	f(strings.ReplaceAll(with("Environment = A=1 "), "\n", "\r\n"), map[string]string{"HOOKWATCH_DB": "/a.db", "A": "1"})

	bad := func(content, want string) {
		t.Helper()
		if _, err := ReadServiceUnit("linux", []byte(content)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("read: %v, want an error saying %q\n%s", err, want, content)
		}
	}
	bad(strings.Replace(string(unit), "# Written", "# Not written", 1), "not written by hookwatch service install")
	bad(with("MemoryMax=1G"), `"MemoryMax=1G" is not a setting`)
	bad(with("[Socket]"), "section [Socket]")
	bad(strings.Replace(string(unit), "[Unit]\n", "[Unit]\nAfter=network.target\n", 1), "After=network.target")
	bad(with("Environment=A=%h"), "specifier (%h)")
	bad(with("Environment=A=100%"), "specifier (%)")
	bad(with(`Environment="A=1`), "unterminated quote")
	bad(with(`Environment=A=\q`), `escape \q`)
	bad(with("Environment=NOVALUE"), `"NOVALUE" is not NAME=value`)
	bad(with("Environment=A-B=1"), `is not NAME=value`)
	bad(with("Environment=A=1 \\\nB=2"), "continued")
	bad(with(`ExecStart="/usr/bin/hookwatch" serve`), "a second ExecStart")
	bad(strings.Replace(string(unit), `ExecStart="/usr/bin/hookwatch" serve`, `ExecStart=-/usr/bin/hookwatch serve`, 1), "not <binary> serve")
	bad(strings.Replace(string(unit), `ExecStart="/usr/bin/hookwatch" serve`, `ExecStart=/usr/bin/hookwatch serve --retain 720h`, 1), "not <binary> serve")
	bad(strings.Replace(string(unit), `ExecStart="/usr/bin/hookwatch" serve`, `ExecStart=$HW serve`, 1), "variable expansion")
	bad(strings.Replace(string(unit), `ExecStart="/usr/bin/hookwatch" serve`+"\n", "", 1), "no ExecStart")
	bad(string(unit)+"#"+strings.Repeat("x", MaxServiceUnitSize), "larger than 64 KiB")
}

// TestReadLaunchdPlist: an entry of EnvironmentVariables as a hand may
// write it reads back; a key launchdPlist does not write, a value of
// another type, a binary or malformed plist are errors.
func TestReadLaunchdPlist(t *testing.T) {
	_, plist := ServiceUnit("darwin", "/usr/bin/hookwatch", map[string]string{"HOOKWATCH_DB": "/a.db"})
	replace := func(old, new string) string {
		t.Helper()
		if !strings.Contains(string(plist), old) {
			t.Fatalf("the plist lacks %q", old)
		}
		return strings.Replace(string(plist), old, new, 1)
	}
	env := "<key>HOOKWATCH_DB</key>\n\t\t<string>/a.db</string>"
	got, err := ReadServiceUnit("darwin", []byte(replace(env, env+"<key>A</key><string>x &amp; <![CDATA[<y>]]></string>\n<!-- a comment -->")))
	if err != nil || got.Env["A"] != "x & <y>" || got.Env["HOOKWATCH_DB"] != "/a.db" || got.Command != "serve" {
		t.Errorf("read %+v, %v", got, err)
	}
	bad := func(content, want string) {
		t.Helper()
		if _, err := ReadServiceUnit("darwin", []byte(content)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("read: %v, want an error saying %q\n%s", err, want, content)
		}
	}
	bad(replace("<!-- Written by", "<!-- Edited by"), "not written by hookwatch service install")
	bad(replace("<key>RunAtLoad</key>", "<key>WorkingDirectory</key><string>/tmp/x</string><key>RunAtLoad</key>"), "the key WorkingDirectory")
	bad(replace("<string>serve</string>", "<string>serve</string><string>--retain</string>"), "not <binary> serve")
	bad(replace(env, "<key>HOOKWATCH_DB</key><integer>1</integer>"), "<integer>, not a <string>")
	bad(replace(env, "<key>HOOKWATCH_DB</key>"), "a key without a value")
	bad(replace(env, "<key>BAD NAME</key><string>x</string>"), "not a variable name")
	bad(replace("</dict>\n</plist>", "</dict>\n<dict></dict>\n</plist>"), "<dict> after the <dict>")
	bad(replace("</plist>", ""), "unexpected EOF")
	bad("bplist00\x00", "binary property list")
	bad(string(plist)+"<!--"+strings.Repeat("x", MaxServiceUnitSize)+"-->", "larger than 64 KiB")
}

func TestUnifiedDiff(t *testing.T) {
	f := func(a, b, want string) {
		t.Helper()
		if got := unifiedDiff("a", "b", []byte(a), []byte(b)); got != want {
			t.Errorf("unifiedDiff(%q, %q) =\n%s\nwant\n%s", a, b, got, want)
		}
	}
	f("x\n", "x\n", "")
	f("", "a\nb\n", "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n")
	f("a\n", "", "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n")
	f("a\nb\nc\n", "a\nB\nc\n", "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
	f("{}", "{}\n", "--- a\n+++ b\n@@ -1 +1 @@\n-{}\n\\ No newline at end of file\n+{}\n")
	// Two changes far apart make two hunks; near ones share one.
	lines := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	f(lines, strings.Replace(strings.Replace(lines, "2\n", "two\n", 1), "11\n", "eleven\n", 1),
		"--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+eleven\n 12\n")
	f(lines, strings.Replace(strings.Replace(lines, "2\n", "two\n", 1), "8\n", "eight\n", 1),
		"--- a\n+++ b\n@@ -1,11 +1,11 @@\n 1\n-2\n+two\n 3\n 4\n 5\n 6\n 7\n-8\n+eight\n 9\n 10\n 11\n")
}

func TestDetectStyle(t *testing.T) {
	f := func(in string, want style) {
		t.Helper()
		if got := detectStyle([]byte(in)); got != want {
			t.Errorf("detectStyle(%q) = %+v; want %+v", in, got, want)
		}
	}
	f("{}", defaultStyle)
	f("{\n  \"a\": 1\n}\n", defaultStyle)
	f("{\n    \"a\": 1,\n    \"b\": 2\n}", style{nl: "\n", unit: "    ", colon: ": ", comma: ", "})
	f("{\n\t\"a\":1\n}", style{nl: "\n", unit: "\t", colon: ":", comma: ","})
	f("{\r\n  \"a\" : 1\r\n}", style{nl: "\r\n", unit: "  ", colon: " : ", comma: ", "})
	f(`{"a":1,"b":2}`, style{nl: "\n", unit: "  ", colon: ":", comma: ",", oneLine: true})
	f(`{ "a": 1, "b": 2 }`, style{nl: "\n", unit: "  ", colon: ": ", comma: ", ", oneLine: true})
	f("{\n\"a\": 1\n}", style{nl: "\n", unit: "", colon: ": ", comma: ", "})
}

// TestListensAt: a collector listening on an address answers at the same
// one, and at any address of its port when it listens on all of them.
func TestListensAt(t *testing.T) {
	for _, tc := range []struct {
		addr, want string
		ok         bool
	}{
		{"127.0.0.1:7421", "127.0.0.1:7421", true},
		{"0.0.0.0:7421", "127.0.0.1:7421", true},
		{"[::]:7421", "localhost:7421", true},
		{":7421", "[::1]:7421", true},
		{"127.0.0.1:47421", "127.0.0.1:7421", false},
		{"0.0.0.0:47421", "127.0.0.1:7421", false},
		{"10.0.0.5:7421", "127.0.0.1:7421", false},
		{"localhost:7421", "127.0.0.1:7421", false},
		{"127.0.0.1", "127.0.0.1:7421", false},
	} {
		if got := ListensAt(tc.addr, tc.want); got != tc.ok {
			t.Errorf("ListensAt(%q, %q) = %v, want %v", tc.addr, tc.want, got, tc.ok)
		}
	}
}

// TestIsTemporaryBuildGoRun: what 'go run' runs is a temporary build, both
// the binary it links, in its work directory, removed once it exits, and
// the copy of the build cache a second run of the same build runs. Real
// runs of the go command on PATH, on a program new to the build cache.
func TestIsTemporaryBuildGoRun(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	dir := t.TempDir()
	// A constant no earlier run built: the first run links it anew.
	src := fmt.Sprintf("package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nconst run = %d\n\nfunc main() {\n\texe, err := os.Executable()\n\tif err != nil {\n\t\tpanic(err)\n\t}\n\tfmt.Print(exe)\n}\n", time.Now().UnixNano())
	for name, body := range map[string]string{"go.mod": "module gorun\n\ngo 1.22\n", "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	goRun := func() string {
		t.Helper()
		cmd := exec.Command(gocmd, "run", ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go run: %v", err)
		}
		return string(out)
	}
	linked, cached := goRun(), goRun()
	if !IsTemporaryBuild(linked) || !IsTemporaryBuild(cached) {
		t.Errorf("IsTemporaryBuild(%s) = %v, IsTemporaryBuild(%s) = %v; want both true", linked, IsTemporaryBuild(linked), cached, IsTemporaryBuild(cached))
	}
	// What the doc comment says of each.
	if filepath.Base(filepath.Dir(linked)) != "exe" {
		t.Errorf("the first go run ran %s, not a binary of its work directory", linked)
	}
	if _, err := os.Stat(linked); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s, run by the first go run, after it exited: %v, want it removed", linked, err)
	}
	if cached == linked || !strings.HasSuffix(filepath.Base(filepath.Dir(cached)), "-d") {
		t.Errorf("the second go run ran %s, not a copy of the build cache", cached)
	}
	if _, err := os.Stat(cached); err != nil {
		t.Errorf("%s, run by the second go run, after it exited: %v, want it kept", cached, err)
	}
	// Not one: a binary installed, or built where the user said.
	for _, p := range []string{filepath.Join(dir, "bin", "hookwatch"), filepath.Join(os.TempDir(), "go-build-tools", "bin", "hookwatch")} {
		if IsTemporaryBuild(p) {
			t.Errorf("IsTemporaryBuild(%s) = true", p)
		}
	}
}
