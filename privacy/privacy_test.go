package privacy

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/internal/secrettest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// Fake secrets are assembled at run time so that the repository holds no
// string that a secret scanner would flag.
var (
	ghp       = secrettest.GitHub
	akia      = secrettest.AWSAccessKey
	awsSecret = secrettest.AWSSecret
	openai    = secrettest.OpenAI
	anthropic = secrettest.Anthropic
	jwt       = secrettest.JWT
	pem       = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEA7bqx2Zq\n", 40) + "-----END RSA " + "PRIVATE KEY-----\n"
)

// secrets returns hook payloads in the shapes of real ones, with secrets
// where they leak in practice.
func secrets() []string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	long := strings.Repeat("line of build output ✓ ", 600) // 14 KiB, multi-byte runes
	base := `"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a"`
	return []string{
		`{` + base + `,"hook_event_name":"UserPromptSubmit","prompt":` + q("deploy it; the key is "+openai+" and my db password: hunter22") + `}`,
		`{` + base + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":` + q(`curl -H "Authorization: Bearer `+jwt+`" https://api.example.com && psql postgres://app:s3cr3t@db/app`) + `,"description":"call the API"},"tool_use_id":"toolu_01"}`,
		`{` + base + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"env"},"tool_response":{"stdout":` + q("AWS_ACCESS_KEY_ID="+akia+"\nAWS_SECRET_ACCESS_KEY="+awsSecret+"\n"+long+pem) + `,"stderr":"","interrupted":false},"tool_use_id":"toolu_02","duration_ms":12}`,
		`{` + base + `,"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Bash","tool_input":{"command":` + q("GITHUB_TOKEN="+ghp+" gh pr list") + `},"tool_use_id":"toolu_03","tool_response":` + q("#12 fix it\n"+long+"token="+ghp) + `},{"tool_name":"Read","tool_input":{"file_path":"/home/dev/.env"},"tool_use_id":"toolu_04","tool_response":` + q("ANTHROPIC_API_KEY="+anthropic+"\n") + `}]}`,
		`{` + base + `,"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"make deploy"},"tool_use_id":"toolu_05","error":` + q("Exit code 1\nerror: invalid token "+ghp) + `,"is_interrupt":false}`,
		`{` + base + `,"hook_event_name":"PreToolUse","tool_name":"mcp__stripe__create_refund","tool_input":{"api_key":"rk_live_4eC39HqLyjWDarjtT1zdp7dc","amount":500,"headers":{"Authorization":"Basic dXNlcjpwYXNz"}},"tool_use_id":"toolu_06"}`,
		`{` + base + `,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":` + q("Set DB_PASSWORD=hunter22 in .env and restart.") + `,"background_tasks":[{"id":"b1","type":"shell","status":"running","description":"server","command":` + q("API_KEY=abc123 ./server") + `}],"session_crons":[]}`,
		`{` + base + `,"hook_event_name":"ElicitationResult","mcp_server_name":"vault","action":"accept","content":{"token":"hvs.CAESIJ0abc123"},"elicitation_id":"e1"}`,
		`{` + base + `,"hook_event_name":"Notification","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}`,
		`{` + base + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cat x"},"tool_response":{"hookwatch_capture":"preview","bytes":99999,"head":"` + strings.Repeat("smuggled ", 200) + `"},"tool_use_id":"toolu_07"}`,
		`{` + base + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cat x"},"tool_response":{"hookwatch_capture":"preview","bytes":5000,"head":"{\"stdout\":\"token=` + ghp + `"},"tool_use_id":"toolu_08"}`,
		`{` + base + `,"hook_event_name":"PostToolUse","tool_name":"Odd","tool_input":"not an object","tool_response":42,"tool_calls":"not an array","prompt":{"nested":["sk-ant-` + strings.Repeat("Qw2-Er5tXy7_", 3) + `"]}}`,
		`{` + base + `,"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/a"},"tool_response":null}`,
	}
}

// modes are the options the golden files are written for.
var modes = []struct {
	name string
	o    Options
}{
	{"preview", DefaultOptions()},
	{"none", Options{Capture: CaptureNone, Redact: true}},
	{"full", Options{Capture: CaptureFull, Redact: true}},
	{"preview-noredact", Options{Capture: CapturePreview, Redact: false}},
}

func TestGolden(t *testing.T) {
	real := readLines(t, "testdata/payloads.jsonl")
	for _, set := range []struct {
		name  string
		lines []string
	}{{"payloads", real}, {"secrets", secrets()}} {
		for _, m := range modes {
			if set.name == "secrets" && !m.o.Redact {
				continue // its golden file would hold the fake secrets
			}
			var out bytes.Buffer
			for _, line := range set.lines {
				p := decode(t, line)
				Apply(p, m.o)
				checkApplied(t, p, m.o)
				out.Write(encode(t, p))
				out.WriteByte('\n')
			}
			golden(t, filepath.Join("testdata", "golden", set.name+"."+m.name+".jsonl"), out.Bytes())
		}
	}
}

// checkApplied checks what holds for every payload after Apply.
func checkApplied(t *testing.T, p map[string]json.RawMessage, o Options) {
	t.Helper()
	for k, v := range p {
		if !json.Valid(v) {
			t.Errorf("%s is not valid JSON: %s", k, v)
		}
	}
	if Apply(p, o) {
		t.Errorf("a second Apply changed %s", encode(t, p))
	}
	if !o.Redact {
		return
	}
	all := string(encode(t, p))
	for _, s := range []string{ghp, akia, awsSecret, openai, anthropic, jwt, "hunter22", "s3cr3t", "abc123", "4eC39HqLyjWDarjtT1zdp7dc", "dXNlcjpwYXNz", "MIIEowIBAAKCAQEA7bqx2Zq"} {
		if strings.Contains(all, s) {
			t.Errorf("secret %.12s… survived: %s", s, all)
		}
	}
}

func TestApply(t *testing.T) {
	ids := `"session_id":"s1","tool_use_id":"toolu_1","cwd":"/home/dev/pass=word","transcript_path":"/t/token=abc.jsonl","agent_id":"a1"`
	f := func(in string, o Options, want string) {
		t.Helper()
		p := decode(t, in)
		changed := Apply(p, o)
		got := string(encode(t, p))
		if got != want {
			t.Errorf("Apply(%s)\n got %s\nwant %s", in, got, want)
		}
		if changed != (got != string(encode(t, decode(t, in)))) {
			t.Errorf("Apply(%s) reported changed=%v", in, changed)
		}
		checkApplied(t, p, o)
	}
	d := DefaultOptions()

	// Ids and paths stay byte for byte, everything else is redacted.
	f(`{`+ids+`,"prompt":"export DB_PASSWORD=hunter22"}`, d,
		`{"agent_id":"a1","cwd":"/home/dev/pass=word","prompt":"export DB_PASSWORD=[REDACTED:password]","session_id":"s1","tool_use_id":"toolu_1","transcript_path":"/t/token=abc.jsonl"}`)
	f(`{"command_args":"--token=abc123","delta":"use it as API_KEY=abc123","compact_summary":"PGPASSWORD=hunter22","custom_instructions":"token: zz99","message":"password=hunter22","error":"Authorization: Bearer abc123","whatever_comes_next":"SECRET=x1"}`, d,
		`{"command_args":"--token=[REDACTED:secret]","compact_summary":"PGPASSWORD=[REDACTED:password]","custom_instructions":"token: [REDACTED:secret]","delta":"use it as API_KEY=[REDACTED:secret]","error":"Authorization: Bearer [REDACTED:authorization]","message":"password=[REDACTED:password]","whatever_comes_next":"SECRET=[REDACTED:secret]"}`)
	f(`{"prompt":"DB_PASSWORD=hunter22"}`, Options{Capture: CaptureFull}, `{"prompt":"DB_PASSWORD=hunter22"}`)

	// Capture modes.
	out := `{"stdout":"hello","stderr":""}` // 30 bytes
	f(`{"tool_response":`+out+`}`, d, `{"tool_response":{"hookwatch_capture":"preview","bytes":30,"head":"{\"stdout\":\"hello\",\"stderr\":\"\"}"}}`)
	f(`{"tool_response":`+out+`}`, Options{Capture: CaptureNone}, `{"tool_response":{"hookwatch_capture":"none","bytes":30}}`)
	f(`{"tool_response":`+out+`}`, Options{Capture: CaptureFull, Redact: true}, `{"tool_response":`+out+`}`)
	f(`{"tool_response":{"stdout":"TOKEN=abc123"}}`, Options{Capture: CaptureFull, Redact: true}, `{"tool_response":{"stdout":"TOKEN=[REDACTED:secret]"}}`)
	f(`{"tool_response":{"stdout":"TOKEN=abc123"}}`, Options{Capture: CaptureFull}, `{"tool_response":{"stdout":"TOKEN=abc123"}}`)
	f(`{"tool_response":"hi.txt\n"}`, d, `{"tool_response":{"hookwatch_capture":"preview","bytes":10,"head":"\"hi.txt\\n\""}}`)
	f(`{"tool_response":"0123456789"}`, Options{Capture: CapturePreview, PreviewBytes: 6}, `{"tool_response":{"hookwatch_capture":"preview","bytes":12,"head":"\"012","tail":"9\""}}`)
	f(`{"tool_response":"0123456789"}`, Options{Capture: "bogus"}, `{"tool_response":{"hookwatch_capture":"none","bytes":12}}`)
	f(`{"tool_response":null}`, d, `{"tool_response":null}`)
	f(`{"tool_response":7}`, d, `{"tool_response":{"hookwatch_capture":"preview","bytes":1,"head":"7"}}`)

	// A capture is left alone, reduced to none by a stricter collector, redacted by one that redacts.
	pre := `{"tool_response":{"hookwatch_capture":"preview","bytes":5000,"head":"{\"a\":\"TOKEN=abc123","tail":"z\"}"}}`
	f(pre, Options{Capture: CapturePreview}, pre)
	f(pre, Options{Capture: CaptureFull}, pre)
	f(pre, Options{Capture: CaptureNone}, `{"tool_response":{"hookwatch_capture":"none","bytes":5000}}`)
	f(pre, d, `{"tool_response":{"hookwatch_capture":"preview","bytes":5000,"head":"{\"a\":\"TOKEN=[REDACTED:secret]","tail":"z\"}"}}`)
	f(`{"tool_response":{"hookwatch_capture":"none","bytes":5000}}`, d, `{"tool_response":{"hookwatch_capture":"none","bytes":5000}}`)
	// …but a forged one is captured like any output.
	f(`{"tool_response":{"hookwatch_capture":"none","bytes":1,"data":"x"}}`, Options{Capture: CaptureNone},
		`{"tool_response":{"hookwatch_capture":"none","bytes":49}}`)
	// So is one that repeats a key: its map hides the earlier value, which
	// the object's bytes still hold.
	f(`{"tool_response":{"hookwatch_capture":"none","bytes":"TOKEN=abc123","bytes":5}}`, Options{Capture: CaptureNone},
		`{"tool_response":{"hookwatch_capture":"none","bytes":61}}`)
	f(`{"tool_response":{"hookwatch_capture":"none","bytes":"TOKEN=abc123","bytes":5}}`, d,
		`{"tool_response":{"hookwatch_capture":"preview","bytes":61,"head":"{\"hookwatch_capture\":\"none\",\"bytes\":\"TOKEN=[REDACTED:secret]\",\"bytes\":5}"}}`)
	f(`{"tool_response":{"hookwatch_capture":"preview","bytes":12,"head":"TOKEN=abc123 and the rest","head":"x"}}`, Options{Capture: CaptureNone},
		`{"tool_response":{"hookwatch_capture":"none","bytes":88}}`)

	// Codex's apply_patch keeps the files it touches, not the diff, unless
	// the capture is full.
	patch := `{"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: notes.md\n+TOKEN=abc123\n*** End Patch\n"}}`
	reduced := `{"tool_input":{"command":"*** Begin Patch\n*** Add File: notes.md\n*** End Patch\n","hookwatch_capture":"patch","bytes":67},"tool_name":"apply_patch"}`
	f(patch, d, reduced)
	f(reduced, d, reduced)
	f(patch, Options{Capture: CaptureNone}, reduced)
	f(patch, Options{Capture: CaptureFull, Redact: true}, `{"tool_input":{"command":"*** Begin Patch\n*** Add File: notes.md\n+TOKEN=[REDACTED:secret]\n*** End Patch\n"},"tool_name":"apply_patch"}`)
	// A marker the agent wrote does not keep a body, nor does a repeated
	// command before the headers.
	f(`{"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: notes.md\n+TOKEN=abc123\n*** End Patch\n","command":"*** Begin Patch\n*** Add File: notes.md\n*** End Patch\n","hookwatch_capture":"patch","bytes":67}}`,
		Options{Capture: CapturePreview},
		`{"tool_input":{"command":"*** Begin Patch\n*** Add File: notes.md\n*** End Patch\n","hookwatch_capture":"patch","bytes":53},"tool_name":"apply_patch"}`)
	f(`{"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n+x\n","hookwatch_capture":"patch","bytes":1}}`, d,
		`{"tool_input":{"command":"*** Begin Patch\n","hookwatch_capture":"patch","bytes":19},"tool_name":"apply_patch"}`)
	f(`{"tool_name":"Bash","tool_input":{"command":"*** Begin Patch\n+x\n"}}`, d, `{"tool_input":{"command":"*** Begin Patch\n+x\n"},"tool_name":"Bash"}`)

	// PostToolBatch: each call's output captured, input redacted, order and ids kept.
	f(`{"tool_calls":[{"tool_name":"Bash","tool_input":{"command":"TOKEN=abc123 make"},"tool_use_id":"t1","tool_response":"ok"},{"tool_use_id":"t2","tool_name":"Read"}, 5]}`, d,
		`{"tool_calls":[{"tool_name":"Bash","tool_input":{"command":"TOKEN=[REDACTED:secret] make"},"tool_use_id":"t1","tool_response":{"hookwatch_capture":"preview","bytes":4,"head":"\"ok\""}},{"tool_use_id":"t2","tool_name":"Read"},5]}`)
	f(`{"tool_calls":[]}`, d, `{"tool_calls":[]}`)
	// A preview an older hook built from the JSON text, where the secret
	// follows the escape "\n", is redacted on its decoded text.
	f(`{"tool_response":{"hookwatch_capture":"preview","bytes":5000,"head":"\"HOME=/root\\n`+akia+`\\n"}}`, d,
		`{"tool_response":{"hookwatch_capture":"preview","bytes":5000,"head":"\"HOME=/root\\n[REDACTED:aws_access_key_id]\\n"}}`)
	// Keys that are secrets are redacted; two that redact alike are both kept.
	f(`{"`+ghp+`":1,"x":{"`+akia+`":"v"}}`, d, `{"[REDACTED:github_token]":1,"x":{"[REDACTED:aws_access_key_id]":"v"}}`)
	f(`{"`+ghp+`":1,"`+ghp[:len(ghp)-1]+`X":2}`, d, `{"[REDACTED:github_token]":1,"[REDACTED:github_token]#2":2}`)
	f(`{"tool_calls":"TOKEN=abc123"}`, d, `{"tool_calls":"TOKEN=[REDACTED:secret]"}`)
}

func TestPreviewCuts(t *testing.T) {
	f := func(text string, o Options) {
		t.Helper()
		raw, _ := json.Marshal(text)
		p := map[string]json.RawMessage{"tool_response": raw}
		Apply(p, o)
		var c struct {
			Capture string `json:"hookwatch_capture"`
			Bytes   int    `json:"bytes"`
			Head    string `json:"head"`
			Tail    *string
		}
		if err := json.Unmarshal(p["tool_response"], &c); err != nil {
			t.Fatal(err)
		}
		hb, tb := o.split()
		if c.Bytes != len(raw) || c.Capture != "preview" {
			t.Errorf("bytes = %d (want %d), capture %q", c.Bytes, len(raw), c.Capture)
		}
		if !utf8.ValidString(c.Head) || (c.Tail != nil && !utf8.ValidString(*c.Tail)) {
			t.Errorf("head or tail is not valid UTF-8")
		}
		if len(c.Head) > hb+markerSlack || (c.Tail != nil && len(*c.Tail) > tb+markerSlack) {
			t.Errorf("head %d or tail bytes over budget %d+%d", len(c.Head), hb, tb)
		}
		if !o.Redact && (c.Tail != nil) != (len(raw) > hb && tb > 0) {
			t.Errorf("tail present = %v for %d bytes", c.Tail != nil, len(raw))
		}
		if !strings.HasPrefix(string(raw), strings.Split(c.Head, "[REDACTED:")[0]) {
			t.Errorf("head %q is not a prefix of the text", c.Head)
		}
		if c.Tail != nil {
			parts := strings.Split(*c.Tail, "]")
			if !strings.HasSuffix(string(raw), parts[len(parts)-1]) {
				t.Errorf("tail %q is not a suffix of the text", *c.Tail)
			}
		}
	}
	d := DefaultOptions()
	nr := Options{Capture: CapturePreview}
	f("", d)
	f(strings.Repeat("é", 300), nr)  // 2-byte runes across both cuts
	f(strings.Repeat("日本", 500), nr) // 3-byte runes
	f(strings.Repeat("🙂", 2000), nr) // 4-byte runes, long path
	f(strings.Repeat("x", 509)+ghp+strings.Repeat("y", 1000), d)
	f(strings.Repeat("x", 20000)+"TOKEN="+ghp, d)
	f(strings.Repeat("ab", 5), Options{Capture: CapturePreview, PreviewBytes: 1})

	// A secret straddling a cut is redacted whole, on both cuts and both paths.
	for _, n := range []int{400, 490, 505, 511, 20000} {
		text := strings.Repeat("x", n) + " " + ghp + " " + strings.Repeat("y", n) + " " + ghp + " " + strings.Repeat("z", 230)
		raw, _ := json.Marshal(text)
		p := map[string]json.RawMessage{"tool_response": raw}
		Apply(p, d)
		if s := string(p["tool_response"]); strings.Contains(s, ghp[:8]) {
			t.Errorf("n=%d: part of a secret survived a cut: %s", n, s)
		}
	}
	// Redaction that shortens the text before the tail (a long default
	// becomes a marker) does not bring into the tail text read without
	// what starts it: the rest of a password whose expansion starts
	// before the window around the cut.
	for _, n := range []int{3000, 4100, 4200} {
		text := strings.Repeat("x\n", 10000) + "DB_PASSWORD=${A:-" + strings.Repeat("Gm2Xr7Vk4Qz9", 24) + "Bn6Hw3Jt8Ly5} ./run\n" +
			"API_TOKEN=${A:-" + strings.Repeat("Xk93mzPq77", n/10) + "} ./run"
		raw, _ := json.Marshal(text)
		p := map[string]json.RawMessage{"tool_response": raw}
		Apply(p, d)
		if s := string(p["tool_response"]); strings.Contains(s, "Bn6Hw3Jt8Ly5") || strings.Contains(s, "Xk93mzPq77") {
			t.Errorf("n=%d: a password read out of its context survived the tail's cut: %s", n, s)
		}
	}
	// A private key cut by the head or tail does not leak its body; nor
	// does one with no END line (a cut log, a key printed by halves)
	// whose BEGIN line is further before the tail than the window around
	// the tail's cut.
	noEnd := "-----BEGIN RSA " + "PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEA7bqx2Zq\n", 400)
	for _, text := range []string{
		strings.Repeat("x", 300) + pem + strings.Repeat("y", 20000),
		strings.Repeat("y", 20000) + pem + "done",
		strings.Repeat("y", 20000) + noEnd,
		strings.Repeat("y", 20000) + noEnd + "[output cut]",
		strings.Repeat("y", 20000) + "\n" + strings.ReplaceAll(strings.TrimSuffix(noEnd, "\n"), "\n", "\ncerts/tls.key:"), // grep -r
	} {
		raw, _ := json.Marshal(text)
		p := map[string]json.RawMessage{"tool_response": raw}
		Apply(p, d)
		if s := string(p["tool_response"]); strings.Contains(s, "MIIE") || !strings.Contains(s, "[REDACTED:private_key]") {
			t.Errorf("private key body survived: %s", s)
		}
	}
}

func TestHugeOutput(t *testing.T) {
	raw := hugeResponse()
	p := map[string]json.RawMessage{"hook_event_name": json.RawMessage(`"PostToolUse"`), "tool_response": raw}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	Apply(p, DefaultOptions())
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<10 {
		t.Errorf("a preview of %d MiB allocated %d bytes", len(raw)>>20, alloc)
	}
	s := string(p["tool_response"])
	if !strings.Contains(s, fmt.Sprintf(`"bytes":%d`, len(raw))) || strings.Contains(s, ghp) || strings.Count(s, "[REDACTED:github_token]") != 2 {
		t.Errorf("preview = %s", s)
	}
	if len(s) > 2048 {
		t.Errorf("preview is %d bytes", len(s))
	}

	// The same inside PostToolBatch.
	calls := []byte(`[{"tool_name":"Bash","tool_input":{"command":"cat big.log"},"tool_use_id":"t1","tool_response":` + string(raw) + `}]`)
	p = map[string]json.RawMessage{"tool_calls": calls}
	Apply(p, DefaultOptions())
	if s := string(p["tool_calls"]); len(s) > 2048 || !strings.Contains(s, `"tool_use_id":"t1"`) || strings.Contains(s, ghp) {
		t.Errorf("tool_calls = %.300s", s)
	}
}

// hugeResponse is a 64 MiB tool output with a secret at each end.
func hugeResponse() json.RawMessage {
	body := strings.Repeat("0123456789abcdef", (64<<20)/16-8)
	raw, _ := json.Marshal("TOKEN=" + ghp + "\n" + body + "\nTOKEN=" + ghp)
	return raw
}

func BenchmarkApply(b *testing.B) {
	lines := readLines(b, "testdata/payloads.jsonl")
	var post, batch string
	for _, l := range lines {
		if strings.Contains(l, `"hook_event_name":"PostToolUse","tool_name":"Bash"`) && post == "" {
			post = l
		}
		if strings.Contains(l, `"PostToolBatch"`) && batch == "" {
			batch = l
		}
	}
	bench := func(name string, o Options, mk func() map[string]json.RawMessage, size int) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				p := mk()
				b.StartTimer()
				Apply(p, o)
			}
		})
	}
	d := DefaultOptions()
	bench("posttooluse", d, func() map[string]json.RawMessage { return decode(b, post) }, len(post))
	bench("posttoolbatch", d, func() map[string]json.RawMessage { return decode(b, batch) }, len(batch))
	huge := hugeResponse()
	bench("posttooluse-64MiB", d, func() map[string]json.RawMessage {
		return map[string]json.RawMessage{"tool_response": huge}
	}, len(huge))
	calls := json.RawMessage(`[{"tool_name":"Bash","tool_use_id":"t1","tool_response":` + string(huge) + `}]`)
	bench("posttoolbatch-64MiB", d, func() map[string]json.RawMessage {
		return map[string]json.RawMessage{"tool_calls": calls}
	}, len(calls))
	bench("posttooluse-64MiB-full", Options{Capture: CaptureFull, Redact: true}, func() map[string]json.RawMessage {
		return map[string]json.RawMessage{"tool_response": huge}
	}, len(huge))
}

func TestParseCapture(t *testing.T) {
	f := func(in string, want Capture, wantErr bool) {
		t.Helper()
		got, err := ParseCapture(in)
		if got != want || (err != nil) != wantErr {
			t.Errorf("ParseCapture(%q) = %q, %v", in, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "none, preview or full") {
			t.Errorf("error %q does not name the allowed values", err)
		}
	}
	f("", CapturePreview, false)
	f("preview", CapturePreview, false)
	f(" FULL ", CaptureFull, false)
	f("none", CaptureNone, false)
	f("all", "", true)
}

func TestOptionsFromEnv(t *testing.T) {
	f := func(capture, red string, want Options, wantErr string) {
		t.Helper()
		env := map[string]string{EnvCapture: capture, EnvRedact: red}
		got, err := OptionsFromEnv(func(k string) string { return env[k] })
		if got != want {
			t.Errorf("OptionsFromEnv(%q, %q) = %+v, want %+v", capture, red, got, want)
		}
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("OptionsFromEnv(%q, %q) error = %v, want %q", capture, red, err, wantErr)
		}
	}
	d := DefaultOptions()
	f("", "", d, "")
	f("full", "", Options{CaptureFull, DefaultPreviewBytes, true}, "")
	f("none", "0", Options{CaptureNone, DefaultPreviewBytes, false}, "")
	f("preview", "off", Options{CapturePreview, DefaultPreviewBytes, false}, "")
	f("", "FALSE", Options{CapturePreview, DefaultPreviewBytes, false}, "")
	f("", "on", d, "")
	f("everything", "", Options{CaptureNone, DefaultPreviewBytes, true}, "HOOKWATCH_CAPTURE")
	f("", "maybe", d, "HOOKWATCH_REDACT")
}

func FuzzApply(f *testing.F) {
	for _, l := range readLines(f, "testdata/payloads.jsonl") {
		f.Add([]byte(l), uint8(0), uint16(0))
	}
	for i, l := range secrets() {
		f.Add([]byte(l), uint8(i), uint16(i*7))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode uint8, preview uint16) {
		var p map[string]json.RawMessage
		if json.Unmarshal(in, &p) != nil {
			return
		}
		o := Options{
			Capture:      []Capture{CapturePreview, CaptureNone, CaptureFull, ""}[mode%4],
			PreviewBytes: int(preview % 2048),
			Redact:       mode&4 == 0,
		}
		Apply(p, o)
		for k, v := range p {
			if !json.Valid(v) {
				t.Fatalf("%s is not valid JSON after Apply: %q", k, v)
			}
		}
		before := encode(t, p)
		if Apply(p, o) {
			t.Fatalf("second Apply changed\n%s\n%s", before, encode(t, p))
		}
	})
}

func decode(tb testing.TB, line string) map[string]json.RawMessage {
	tb.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &p); err != nil {
		tb.Fatalf("cannot decode %.80s: %v", line, err)
	}
	return p
}

// encode renders a payload with sorted keys and its values' bytes as they are.
func encode(tb testing.TB, p map[string]json.RawMessage) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		tb.Fatalf("cannot encode: %v", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func readLines(tb testing.TB, name string) []string {
	tb.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Errorf("%s line %d:\n got %s\nwant %s", name, i+1, gl[i], wl[i])
				return
			}
		}
		t.Errorf("%s: %d lines, want %d", name, len(gl), len(wl))
	}
}
