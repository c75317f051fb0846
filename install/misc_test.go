package install

import (
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"
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

	_, plist := ServiceUnit("darwin", "/a&b/<hookwatch>", nil)
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
