package privacy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/redact"
)

// sample is one secret of a kind the redactor knows: text is what an agent
// would see (the secret with the context its kind needs, such as the name
// of a variable), secret the part that must never be stored.
type sample struct {
	kind, text, secret string
}

// samples returns a secret of every kind, assembled at run time so that the
// repository holds no string a secret scanner would flag.
func samples() []sample {
	alnum36 := strings.Repeat("a1B2c3D4e5F6", 3)
	pemBody := "MIIEowIBAAKCAQEA7bq" + strings.Repeat("x2Zq", 16) + "\n" + strings.Repeat("Qm9vb2", 10) + "==\n"
	pemKey := "-----BEGIN RSA " + "PRIVATE KEY-----\n" + pemBody + "-----END RSA " + "PRIVATE KEY-----"
	s := func(kind, secret string) sample { return sample{kind, secret, secret} }
	return []sample{
		s("anthropic_key", anthropic),
		s("openai_key", openai),
		s("openai_key", "sk-proj-"+strings.Repeat("Tq9_Zx1-Mn4b", 12)),
		s("github_token", ghp),
		s("github_token", "github_pat_11ABCDEFG0"+strings.Repeat("x9Y8z7W6v5", 6)),
		s("gitlab_token", "glpat-"+"Ab1Cd2Ef3Gh4Ij5Kl6Mn"),
		s("slack_token", "xoxb-123456789012-1234567890123-"+"AbCdEfGhIjKlMnOpQrStUvWx"),
		{"slack_token", "https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/" + alnum36[:24], "T0A1B2C3D/B0A1B2C3D/" + alnum36[:24]},
		{"discord_webhook", "https://discord.com/api/webhooks/123456789012345678/" + strings.Repeat("Ab3_dEf-6h", 7), strings.Repeat("Ab3_dEf-6h", 7)},
		s("aws_access_key_id", akia),
		s("aws_access_key_id", "ASIA"+"Y34FZKBOKMUTVV7A"),
		{"aws_secret_access_key", "AWS_SECRET_ACCESS_KEY=" + awsSecret, awsSecret},
		s("google_api_key", "AIza"+"SyA-1234567890abcdefghijklmnopqrstu"),
		s("stripe_key", "sk_live_"+"4eC39HqLyjWDarjtT1zdp7dc"),
		s("stripe_key", "rk_test_"+"4eC39HqLyjWDarjtT1zdp7dc"),
		s("stripe_key", "whsec_"+alnum36[:32]),
		s("npm_token", "npm_"+alnum36),
		s("huggingface_token", "hf_"+"AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
		s("sendgrid_key", "SG."+"abcdefghijklmnopqrstuv"+"."+strings.Repeat("Ab1_", 11)),
		s("pypi_token", "pypi-AgEIcHlwaS5vcmc"+strings.Repeat("Zx9Yw8", 10)),
		s("digitalocean_token", "dop_v1_"+strings.Repeat("0a1b2c3d", 8)),
		s("docker_token", "dckr_pat_"+"Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr"),
		s("jwt", jwt),
		{"authorization", "Authorization: Bearer zq8Xv2Lm9Pw4Rt6Y", "zq8Xv2Lm9Pw4Rt6Y"},
		{"cookie", "Cookie: session=Qm3Xr8Zt2Wv7Ly4N", "Qm3Xr8Zt2Wv7Ly4N"},
		{"private_key", pemKey, pemBody[:40]},
		{"url_password", "postgres://app:Pw7Xq2Zr9Lm4@db.example.com:5432/app", "Pw7Xq2Zr9Lm4"},
		{"password", "DB_PASSWORD=Hv8Rq3Xz7Wm2", "Hv8Rq3Xz7Wm2"},
		{"secret", "API_TOKEN=Tz5Nq8Xw3Rv6", "Tz5Nq8Xw3Rv6"},
	}
}

// TestSamplesCoverEveryKind holds the samples to the kinds package redact
// documents, and each sample to its kind.
func TestSamplesCoverEveryKind(t *testing.T) {
	doc, err := os.ReadFile("../redact/redact.go")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range samples() {
		have[s.kind] = true
		out, n := redact.String(s.text)
		if n == 0 || strings.Contains(out, s.secret) || !strings.Contains(out, "[REDACTED:"+s.kind+"]") {
			t.Errorf("sample of %s is not redacted as one: %q", s.kind, out)
		}
	}
	kinds := regexp.MustCompile(`(?m)^//\t([a-z_]+) {2,}`).FindAllSubmatch(doc, -1)
	if len(kinds) < 20 {
		t.Fatalf("found only %d kinds in redact's documentation", len(kinds))
	}
	for _, k := range kinds {
		if !have[string(k[1])] {
			t.Errorf("no sample of %s", k[1])
		}
	}
}

// placement puts a secret's text somewhere a payload carries text.
type placement struct {
	name string
	// payload returns the payload with the text placed; lit writes the
	// text as a JSON string literal, each placement choosing how.
	payload func(lit func(string) string, text string) string
}

const ids = `"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d.jsonl","cwd":"/home/dev/src/demo"`

func placements() []placement {
	post := func(tool, input, response string) string {
		return `{` + ids + `,"hook_event_name":"PostToolUse","tool_name":"` + tool + `","tool_input":` + input +
			`,"tool_response":` + response + `,"tool_use_id":"toolu_01"}`
	}
	big := strings.Repeat("build output line ✓\n", 400) // 8 KiB: previews take the long path
	return []placement{
		{"prompt", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"UserPromptSubmit","prompt":` + lit(x) + `}`
		}},
		{"prompt after a newline", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"UserPromptSubmit","prompt":` + lit("use this:\n"+x) + `}`
		}},
		{"command", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":` + lit("echo ok\n"+x) + `},"tool_use_id":"t"}`
		}},
		{"nested in input", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"PreToolUse","tool_name":"mcp__api__call","tool_input":{"request":{"env":[{"value":` + lit(x) + `}]}},"tool_use_id":"t"}`
		}},
		{"key of input", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"PreToolUse","tool_name":"mcp__api__call","tool_input":{"headers":{` + lit(x) + `:"v"}},"tool_use_id":"t"}`
		}},
		{"key of the payload", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"Notification",` + lit(x) + `:1}`
		}},
		{"written file", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/w/.env","content":` + lit("# env\n"+x+"\n") + `},"tool_use_id":"t"}`
		}},
		{"error", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"make"},"tool_use_id":"t","error":` + lit("Exit code 1\n"+x) + `}`
		}},
		{"stdout start", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":`+lit(x)+`,"stderr":"","interrupted":false}`)
		}},
		{"stdout second line", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":`+lit("HOME=/root\n"+x+"\n")+`,"stderr":"","interrupted":false}`)
		}},
		{"stderr after a tab", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":"","stderr":`+lit("warning:\t"+x)+`,"interrupted":false}`)
		}},
		{"stdout, long, near the head cut", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":`+lit(big[:480]+x+"\n"+big)+`}`)
		}},
		{"stdout, long, at the end", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, `{"stdout":`+lit(big+big+x)+`,"stderr":""}`)
		}},
		{"MCP content array", func(lit func(string) string, x string) string {
			return post("mcp__vault__read", `{"path":"kv/app"}`, `[{"type":"text","text":`+lit("found:\n"+x)+`}]`)
		}},
		{"MCP content object", func(lit func(string) string, x string) string {
			return post("mcp__vault__read", `{"path":"kv/app"}`, `{"content":[{"type":"text","text":`+lit("found:\n"+x)+`}],"isError":false}`)
		}},
		{"Read", func(lit func(string) string, x string) string {
			return post("Read", `{"file_path":"/w/.env"}`, `{"type":"text","file":{"filePath":"/w/.env","content":`+lit("A=1\n"+x+"\n")+`,"numLines":2}}`)
		}},
		{"Edit", func(lit func(string) string, x string) string {
			return post("Edit", `{"file_path":"/w/a","old_string":"a","new_string":`+lit(x)+`}`,
				`{"filePath":"/w/a","oldString":"a","newString":`+lit(x)+`,"originalFile":`+lit("a\n"+x)+`,"structuredPatch":[{"lines":[`+lit("+"+x)+`]}]}`)
		}},
		{"Grep", func(lit func(string) string, x string) string {
			return post("Grep", `{"pattern":"KEY"}`, `{"mode":"content","numFiles":1,"filenames":[],"content":`+lit("a.env:3:"+x)+`}`)
		}},
		{"WebFetch", func(lit func(string) string, x string) string {
			return post("WebFetch", `{"url":"https://x"}`, `{"bytes":9,"code":200,"result":`+lit("page\n"+x)+`,"url":"https://x"}`)
		}},
		{"Agent", func(lit func(string) string, x string) string {
			return post("Agent", `{"prompt":"find keys"}`, `{"status":"completed","agentId":"a1","content":[{"type":"text","text":`+lit("Found:\n"+x)+`}]}`)
		}},
		{"Codex output string", func(lit func(string) string, x string) string {
			return post("Bash", `{"command":"env"}`, lit("Exit code: 0\nOutput:\n"+x+"\n"))
		}},
		{"Codex JSON text in a string", func(lit func(string) string, x string) string {
			inner, _ := json.Marshal(map[string]string{"output": "ok\n" + x})
			return post("spawn_agent", `{"message":"go"}`, lit(string(inner)))
		}},
		{"tool_calls", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Bash","tool_input":{"command":` + lit("echo\n"+x) +
				`},"tool_use_id":"t1","tool_response":` + lit("out\n"+x) + `},{"tool_name":"mcp__v__r","tool_input":{` + lit(x) + `:1},"tool_use_id":"t2","tool_response":[{"type":"text","text":` + lit("\t"+x) + `}]}]}`
		}},
		{"statusLine and others", func(lit func(string) string, x string) string {
			return `{` + ids + `,"hook_event_name":"Stop","last_assistant_message":` + lit("Done.\n"+x) + `,"background_tasks":[{"command":` + lit(x) + `}]}`
		}},
	}
}

// literals are the ways a JSON string can be written: as encoding/json
// writes it, with every '/' escaped, and with every letter and digit of the
// secret as a \u escape.
var literals = []struct {
	name string
	lit  func(string) string
}{
	{"plain", func(s string) string { b, _ := json.Marshal(s); return string(b) }},
	{"escaped slashes", func(s string) string {
		b, _ := json.Marshal(s)
		return strings.ReplaceAll(string(b), "/", `\/`)
	}},
	{"unicode escapes", func(s string) string {
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
				fmt.Fprintf(&b, `\u%04X`, r)
			default:
				q, _ := json.Marshal(string(r))
				b.Write(q[1 : len(q)-1])
			}
		}
		b.WriteByte('"')
		return b.String()
	}},
}

// stored returns what the hook stores of a payload: the agent's bytes when
// privacy changed nothing, else the re-encoded payload (hook.payloadJSON).
func stored(t testing.TB, payload []byte, o Options) []byte {
	p, err := event.Decode(payload)
	if err != nil {
		t.Fatalf("cannot decode %s: %v", payload, err)
	}
	if !Apply(p.Raw, o) && !p.InvalidUTF8 {
		return payload
	}
	out, err := json.Marshal(p.Raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// leaks reports whether secret can be read in out: in its bytes, or in the
// text of any of its strings decoded once, twice or three times (a preview
// holds JSON text in a string, a Codex output JSON text in that).
func leaks(out []byte, secret string) bool {
	texts := [][]byte{out}
	for level := 0; level < 4 && len(texts) > 0; level++ {
		var next [][]byte
		for _, text := range texts {
			if bytes.Contains(text, []byte(secret)) {
				return true
			}
			it := jsonscan.NewStrings(text)
			for s, ok := it.Next(); ok; s, ok = it.Next() {
				if bytes.IndexByte(text[s.Start:s.End], '\\') >= 0 {
					next = append(next, jsonscan.AppendDecoded(nil, text[s.Start:s.End]))
				}
			}
		}
		texts = next
	}
	return false
}

// TestNoSecretStored places a secret of every kind everywhere a payload
// carries text, written every way JSON allows, and finds none of them in
// what the hook would store, in any capture mode.
func TestNoSecretStored(t *testing.T) {
	opts := []Options{DefaultOptions(), {Capture: CaptureFull, Redact: true}, {Capture: CaptureNone, Redact: true},
		{Capture: CapturePreview, PreviewBytes: 64, Redact: true}}
	for _, s := range samples() {
		for _, pl := range placements() {
			for _, l := range literals {
				payload := []byte(pl.payload(l.lit, s.text))
				if !json.Valid(payload) {
					t.Fatalf("%s, %s: invalid payload %s", pl.name, l.name, payload)
				}
				for _, o := range opts {
					out := stored(t, payload, o)
					if leaks(out, s.secret) {
						t.Errorf("%s in %s (%s, capture %s/%d): stored in clear: %s", s.kind, pl.name, l.name, o.Capture, o.PreviewBytes, out)
						continue
					}
					if again := stored(t, out, o); !bytes.Equal(again, out) {
						t.Errorf("%s in %s (%s, capture %s): a second pass changed\n%s\n%s", s.kind, pl.name, l.name, o.Capture, out, again)
					}
				}
			}
		}
	}
}

// TestNoSecretStoredCorpus puts a secret of every kind, after a newline,
// into each string of the real payloads' tool_input and tool_response in
// turn: the tool_response of every tool the corpus holds.
func TestNoSecretStoredCorpus(t *testing.T) {
	all := samples()
	n := 0
	for _, p := range corpus.Load(t) {
		var top map[string]json.RawMessage
		if json.Unmarshal(p.JSON, &top) != nil {
			t.Fatalf("%s: not an object", p.Label)
		}
		for _, member := range []string{"tool_input", "tool_response", "tool_calls"} {
			val, ok := top[member]
			if !ok {
				continue
			}
			it := jsonscan.NewStrings(val)
			for str, ok := it.Next(); ok; str, ok = it.Next() {
				if str.Key || str.KeyStart >= 0 && member == "tool_calls" && keep(string(val[str.KeyStart:str.KeyEnd])) {
					continue // ids and names are kept as they are
				}
				s := all[n%len(all)]
				n++
				q, _ := json.Marshal("\n" + s.text + "\n")
				nv := concat(val[:str.End], q[1:len(q)-1], val[str.End:])
				top[member] = nv
				payload, _ := json.Marshal(top)
				top[member] = val
				if out := stored(t, payload, DefaultOptions()); leaks(out, s.secret) {
					t.Errorf("%s: %s in %s stored in clear: %s", p.Label, s.kind, member, out)
				}
				if out := stored(t, payload, Options{Capture: CaptureFull, Redact: true}); leaks(out, s.secret) {
					t.Errorf("%s: %s in %s (full capture) stored in clear: %s", p.Label, s.kind, member, out)
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d strings in the corpus's tool inputs and outputs", n)
	}
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// FuzzNoSecretStored embeds a secret at a random place of a random payload
// and checks that it is never stored in clear.
func FuzzNoSecretStored(f *testing.F) {
	f.Add([]byte(`{"stdout":"a\nb","stderr":""}`), uint8(0), uint16(3), uint8(0))
	f.Add([]byte(`[{"type":"text","text":"x"}]`), uint8(5), uint16(1), uint8(1))
	f.Add([]byte(`"plain text"`), uint8(9), uint16(2), uint8(2))
	f.Add([]byte(`{"k":{"n":[1,"a\u0041",{"x":"y"}]}}`), uint8(20), uint16(7), uint8(3))
	f.Add([]byte("not json at all"), uint8(11), uint16(0), uint8(4))
	f.Add([]byte(`{"type":"text","file":{"filePath":"/w/a.go","content":"package a\n","numLines":1}}`), uint8(3), uint16(40), uint8(70))
	f.Add([]byte(`"{\"agent_id\":\"01a1\",\"nickname\":\"Godel\"}"`), uint8(7), uint16(9), uint8(200))
	all := samples()
	members := []string{"tool_response", "tool_input", "prompt", "error", "tool_calls", "content", "whatever"}
	lineSeps := []string{"\n", "\r\n", "\n\t", "\n  "}
	tokenSeps := append([]string{"\t", " ", ": ", "\"", "'", "="}, lineSeps...)
	f.Fuzz(func(t *testing.T, value []byte, which uint8, at uint16, how uint8) {
		s := all[int(which)%len(all)]
		if !json.Valid(value) {
			q, _ := json.Marshal(string(value))
			value = q
		}
		// The secret goes into the at-th string (a key or a value), after a
		// separator and before a line break, written one of the ways JSON
		// allows. A secret known by its context (DB_PASSWORD=…) gets a line
		// of its own: text around a name can make it read as code or prose
		// ("password = cfg[…]", "token: Cookie: …"), which the redactor
		// leaves by design.
		seps := tokenSeps
		if s.text != s.secret {
			seps = lineSeps
		}
		sep := seps[int(how)%len(seps)]
		l := literals[int(how/8)%len(literals)]
		lit := l.lit(sep + s.text + "\n")
		var strs []jsonscan.Str
		it := jsonscan.NewStrings(value)
		for str, ok := it.Next(); ok; str, ok = it.Next() {
			strs = append(strs, str)
		}
		if len(strs) == 0 {
			value = []byte(`[` + string(value) + `,` + lit + `]`)
		} else {
			str := strs[int(at)%len(strs)]
			cut := str.Start + jsonscan.CleanStart(value[str.Start:str.End], int(at/16)%(str.End-str.Start+1))
			value = concat(value[:cut], []byte(lit[1:len(lit)-1]), value[cut:])
		}
		member := members[int(how/32)%len(members)]
		if member == "tool_calls" {
			value = []byte(`[{"tool_name":"X","tool_use_id":"t","tool_response":` + string(value) + `,"tool_input":` + string(value) + `}]`)
		}
		payload := []byte(`{` + ids + `,"hook_event_name":"PostToolUse","tool_name":"X",` + lit + `:0,"` + member + `":` + string(value) + `}`)
		if !json.Valid(payload) {
			return // a secret cut into a \u escape's digits
		}
		for _, o := range []Options{DefaultOptions(), {Capture: CaptureFull, Redact: true}} {
			if out := stored(t, payload, o); leaks(out, s.secret) {
				t.Fatalf("%s stored in clear (capture %s):\n%s\n%s", s.kind, o.Capture, payload, out)
			}
		}
	})
}
