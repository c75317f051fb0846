package claudecode

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"
)

// HandlerFixture is one line of testdata/handlers.jsonl: a hook handler in
// one of the shapes Claude Code accepts (or refuses), and whose it is. The
// doctor's tests read the same file to check that install and doctor agree.
type HandlerFixture struct {
	Kind    string          `json:"kind"` // installed, custom, launcher or none
	Why     string          `json:"why"`
	Handler json.RawMessage `json:"handler"`
}

func readHandlerFixtures(t *testing.T) []HandlerFixture {
	t.Helper()
	f, err := os.Open("testdata/handlers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []HandlerFixture
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var h HandlerFixture
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		out = append(out, h)
	}
	return out
}

var kindNames = map[Kind]string{NotHookwatch: "none", Installed: "installed", Custom: "custom", Launcher: "launcher"}

func TestHandlerKindFixtures(t *testing.T) {
	fixtures := readHandlerFixtures(t)
	seen := map[string]bool{}
	for _, fx := range fixtures {
		h, ok := ParseHandler(fx.Handler)
		if !ok {
			t.Errorf("%s: ParseHandler(%s) refused an object", fx.Why, fx.Handler)
			continue
		}
		if got := kindNames[h.Kind("")]; got != fx.Kind {
			t.Errorf("%s: Kind(%s) = %s, want %s", fx.Why, fx.Handler, got, fx.Kind)
		}
		seen[fx.Kind] = true
	}
	for _, k := range kindNames {
		if !seen[k] {
			t.Errorf("no fixture of kind %s", k)
		}
	}
}

func TestHandlerKind(t *testing.T) {
	f := func(raw, binary string, want Kind) {
		t.Helper()
		h, ok := ParseHandler([]byte(raw))
		if !ok {
			t.Fatalf("ParseHandler(%s) refused an object", raw)
		}
		if got := h.Kind(binary); got != want {
			t.Fatalf("Kind(%s, %q) = %s, want %s", raw, binary, kindNames[got], kindNames[want])
		}
	}
	// The binary being installed is recognised whatever its name.
	f(`{"type":"command","command":"/tmp/build/hw","args":["hook"]}`, "/tmp/build/hw", Installed)
	f(`{"type":"command","command":"/tmp/build/hw","args":["hook"]}`, "", NotHookwatch)
	f(`{"type":"command","command":"'/tmp/my build/hw' hook"}`, "/tmp/my build/hw", Installed)
	f(`{"type":"command","command":"/tmp/build/hw","args":["hook","-x"]}`, "/tmp/build/hw", Custom)
	f(`{"type":"command","command":"/tmp/build/hw","args":["serve"]}`, "/tmp/build/hw", NotHookwatch)
	// What install writes in shell form reads back as installed.
	f(`{"type":"command","command":`+jsonQuote(ShellHookCommand("/it's here/hookwatch"))+`}`, "", Installed)

	g := func(raw string) {
		t.Helper()
		if _, ok := ParseHandler([]byte(raw)); ok {
			t.Fatalf("ParseHandler(%s) took a non-object", raw)
		}
	}
	g(`"hookwatch hook"`)
	g(`42`)
	g(`null`)
	g(`[{"type":"command"}]`)
	g(`{"type":`)
}

func TestProgram(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		h, _ := ParseHandler([]byte(raw))
		prog, args, ok := h.Program()
		got := ""
		if ok {
			got = strings.Join(append([]string{prog}, args...), "|")
		}
		if got != want {
			t.Fatalf("Program(%s) = %q, want %q", raw, got, want)
		}
	}
	f(`{"type":"command","command":"/opt/hookwatch","args":["hook"]}`, "/opt/hookwatch|hook")
	f(`{"type":"command","command":"/opt/hookwatch-hook","args":[]}`, "/opt/hookwatch-hook")
	f(`{"type":"command","command":"A=1 B=2 '/my dir/hookwatch' hook -v"}`, "/my dir/hookwatch|hook|-v")
	f(`{"type":"command","command":"=x hookwatch"}`, "=x|hookwatch")
	f(`{"type":"command","command":"   "}`, "")
	f(`{"type":"command","command":"A=1"}`, "")
	f(`{"type":"command","command":""}`, "")
	f(`{"type":"command","command":"","args":["hook"]}`, "")
	f(`{"type":"http","url":"http://x/v1/hooks/claude"}`, "")
	f(`{"type":"command","command":"/opt/hookwatch","args":[1]}`, "")
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestBaseName(t *testing.T) {
	f := func(path, want string) {
		t.Helper()
		if got := BaseName(path); got != want {
			t.Fatalf("BaseName(%q) = %q, want %q", path, got, want)
		}
	}
	f("/usr/local/bin/hookwatch", "hookwatch")
	f(`C:\Tools\hookwatch-hook.exe`, "hookwatch-hook")
	f(`C:\Tools\HOOKWATCH.EXE`, "HOOKWATCH")
	f("hookwatch", "hookwatch")
	f("/opt/", "")
	f("", "")
}

func TestStatuslineRoundTrip(t *testing.T) {
	f := func(old string) {
		t.Helper()
		cmd := StatusLineCommand("/opt/my tools/hookwatch", old, true)
		kind, got := ClassifyStatusLine(cmd, "")
		if kind != StatusWrap || got != old {
			t.Errorf("ClassifyStatusLine(%q) = %v, %q; want the wrapped %q", cmd, kind, got, old)
		}
	}
	f("ccstatusline")
	f("input=$(cat); echo \"$(echo \"$input\" | jq -r '.model.display_name')\"")
	f(`printf '%s\n' "it's"`)
	f("a\\b\tc\nd")
	f("")

	g := func(cmd string, want StatusKind) {
		t.Helper()
		if kind, _ := ClassifyStatusLine(cmd, "/x/hw"); kind != want {
			t.Errorf("ClassifyStatusLine(%q) = %v; want %v", cmd, kind, want)
		}
	}
	g("hookwatch statusline", StatusPlain)
	g("'/opt/hookwatch' statusline", StatusPlain)
	g(`"C:\\Tools\\hookwatch.exe" statusline`, StatusPlain)
	g("/x/hw statusline", StatusPlain)
	g("hookwatch statusline --wrap 'x'", StatusWrap)
	g("hookwatch statusline --color=never", StatusCustom)
	g("hookwatch hook", StatusOther)
	g("/opt/hookwatch-hook statusline", StatusOther) // the lean binary has no statusline
	g("ccstatusline", StatusOther)
	g("hookwatch 'statusline", StatusOther)
	g("", StatusOther)
}

func TestShellQuote(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %q; want %q", in, got, want)
		}
	}
	f("/usr/local/bin/hookwatch", "/usr/local/bin/hookwatch")
	f("/home/me/My Tools/hookwatch", "'/home/me/My Tools/hookwatch'")
	f("it's", `'it'\''s'`)
	f("", "''")
	f("$HOME", "'$HOME'")
}

func TestShellWords(t *testing.T) {
	f := func(in string, want ...string) {
		t.Helper()
		got, ok := ShellWords(in)
		if !ok || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("ShellWords(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	f("a  b\tc\nd", "a", "b", "c", "d")
	f(`'a b' "c \"d\" \$e \x" f\ g`, "a b", `c "d" $e \x`, "f g")
	f("a\\\nb", "ab")
	f("")
	bad := func(in string) {
		t.Helper()
		if w, ok := ShellWords(in); ok {
			t.Errorf("ShellWords(%q) = %q, want a refusal", in, w)
		}
	}
	bad("'a")
	bad(`"a`)
	bad(`a\`)
}

func FuzzShellQuote(f *testing.F) {
	f.Add("ccstatusline --x 'y'")
	f.Add(`"\'$`)
	f.Fuzz(func(t *testing.T, s string) {
		w, ok := ShellWords(ShellQuote(s))
		if !ok || len(w) != 1 || w[0] != s {
			t.Errorf("ShellWords(ShellQuote(%q)) = %q, %v", s, w, ok)
		}
		ShellWords(s) // must not panic
	})
}

func FuzzParseHandler(f *testing.F) {
	f.Add([]byte(`{"type":"command","command":"'/x/hookwatch' hook \"a\\\"b\""}`))
	f.Add([]byte(`{"type":"command","command":"/x/hookwatch-hook","args":[1]}`))
	f.Add([]byte(`{"type":"http","url":"http://h/v1/hooks/claude?"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := ParseHandler(b)
		if !ok {
			return
		}
		k := h.Kind("")
		prog, args, pok := h.Program()
		switch k {
		case Installed, Custom:
			if h.Type == "http" {
				return
			}
			n := BaseName(prog)
			if !pok || n != BinaryName && n != HookBinaryName {
				t.Fatalf("%s: kind %s runs %q", b, kindNames[k], prog)
			}
			if n == BinaryName && (len(args) == 0 || args[0] != "hook") {
				t.Fatalf("%s: kind %s runs %q %q", b, kindNames[k], prog, args)
			}
		}
	})
}

// TestHTTPHeaders: an http handler's headers are filled in as Claude Code
// fills them in, from the variables allowedEnvVars lists only.
func TestHTTPHeaders(t *testing.T) {
	h, ok := ParseHandler([]byte(`{"type":"http","url":"http://127.0.0.1:7421/v1/hooks/claude",
		"headers":{"Authorization":"Bearer $HOOKWATCH_TOKEN","X-Hookwatch-Host":"${HOOKWATCH_HOST}","X-Other":"$HOME and ${HOME} cost $5, $ or ${}"},
		"allowedEnvVars":["HOOKWATCH_TOKEN","HOOKWATCH_HOST"]}`))
	if !ok || h.malformed {
		t.Fatalf("ParseHandler: %+v", h)
	}
	env := map[string]string{"HOOKWATCH_TOKEN": "s3cret", "HOOKWATCH_HOST": "ann-laptop", "HOME": "/home/ann"}
	got := h.HTTPHeaders(func(k string) string { return env[k] })
	want := map[string]string{"Authorization": "Bearer s3cret", "X-Hookwatch-Host": "ann-laptop", "X-Other": "$HOME and ${HOME} cost $5, $ or ${}"}
	if !maps.Equal(got, want) {
		t.Errorf("HTTPHeaders = %v, want %v", got, want)
	}
	if h, _ := ParseHandler([]byte(`{"type":"http","url":"u","headers":["x"]}`)); !h.malformed {
		t.Errorf("headers of the wrong type: %+v, want malformed", h)
	}
}
