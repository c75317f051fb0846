package attribution

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/privacy"
)

func TestTitle(t *testing.T) {
	f := func(prompt, want string) {
		t.Helper()
		if got := Title(prompt); got != want {
			t.Fatalf("Title(%q) = %q, want %q", prompt, got, want)
		}
	}
	f("tidy the project", "tidy the project")
	f("  fix\n\tthe   build \n", "fix the build")
	f("", "")
	words := strings.Repeat("word ", 40)
	f(words, strings.TrimSpace(strings.Repeat("word ", 20))+"…")
	long := strings.Repeat("x", 150)
	f(long, strings.Repeat("x", 100)+"…")
	f(strings.Repeat("é", 120), strings.Repeat("é", 100)+"…")
}

func TestSpawnedAgentID(t *testing.T) {
	f := func(resp, want string) {
		t.Helper()
		if got, _ := spawnedAgentID(json.RawMessage(resp)); got != want {
			t.Fatalf("spawnedAgentID(%s) = %q, want %q", resp, got, want)
		}
	}
	nick := func(resp, want string) {
		t.Helper()
		if _, got := spawnedAgentID(json.RawMessage(resp)); got != want {
			t.Fatalf("spawnedAgentID(%s) nickname %q, want %q", resp, got, want)
		}
	}
	// Codex 0.169's spawn_agent response, as its PostToolUse sends it.
	nick(`"{\"agent_id\":\"01a23446-ad70-7ca2-bafc-64796f33e252\",\"nickname\":\"Maxwell\"}"`, "Maxwell")
	nick(`{"agent_id":"a1","nickname":"Godel"}`, "Godel")
	nick(`{"nickname":"Godel"}`, "")           // no agent: nothing named
	nick(`{"agent_id":"a1","nickname":7}`, "") // not a string
	// The preview the hook makes of it by default: the whole text, in its head.
	nick(`{"hookwatch_capture":"preview","bytes":83,"head":"\"{\\\"agent_id\\\":\\\"01a23446-ad70-7ca2-bafc-64796f33e252\\\",\\\"nickname\\\":\\\"Maxwell\\\"}\""}`, "Maxwell")
	f(`{"hookwatch_capture":"preview","bytes":83,"head":"\"{\\\"agent_id\\\":\\\"01a23446-ad70-7ca2-bafc-64796f33e252\\\",\\\"nickname\\\":\\\"Maxwell\\\"}\""}`, "01a23446-ad70-7ca2-bafc-64796f33e252")
	// A preview's head may be cut inside the nickname.
	nick(`{"hookwatch_capture":"preview","bytes":80,"head":"\"{\\\"agent_id\\\":\\\"01a1fec1-e859\\\",\\\"nickname\\\":\\\"Go"}`, "")
	f(`{"status":"completed","agentId":"a0b378cebfb773646","content":[]}`, "a0b378cebfb773646")
	f(`{"isAsync":true,"status":"async_launched","agentId":"a7f7074a6963e4174"}`, "a7f7074a6963e4174")
	f(`"{\"agent_id\":\"01a1fec1-e859-7292-8494-bb0d2081b260\",\"nickname\":\"Godel\"}"`, "01a1fec1-e859-7292-8494-bb0d2081b260")
	f(`{"hookwatch_capture":"preview","bytes":90000,"head":"{\"status\":\"completed\",\"agentId\":\"a1\",\"content\":[{\"te"}`, "a1")
	f(`{"hookwatch_capture":"preview","head":"{\"prompt\":\"mention agentId here\"","tail":"\"agentId\": \"a2\"}"}`, "a2")
	// The head may end inside the id: a prefix would name another agent.
	f(`{"hookwatch_capture":"preview","bytes":721,"head":"{\"status\":\"completed\",\"agentId\":\"a43b7af8","tail":"0}}"}`, "")
	// A preview that kept agentId as a member is read first.
	f(`{"hookwatch_capture":"preview","bytes":9000,"agentId":"a5","head":"{\"status\":\"completed\",\"prompt\":\"long"}`, "a5")
	// A Codex response is JSON text: its preview head is that text encoded.
	f(`{"hookwatch_capture":"preview","bytes":80,"head":"\"{\\\"agent_id\\\":\\\"01a1fec1-e859\\\",\\\"nick"}`, "01a1fec1-e859")
	f(`"Async agent launched successfully.\nagentId: a3 (use it to check progress)"`, "a3")
	f(`{"status":"completed","content":[{"type":"text","text":"agentId: not-this"}]}`, "") // only the key, not the text
	f(`{"agentId":42}`, "")
	f(`"no id here"`, "")
	f(`[1,2]`, "")
	f(``, "")
	f(`{`, "")
}

func TestToolUseError(t *testing.T) {
	f := func(resp, want string, ok bool) {
		t.Helper()
		got, isErr := toolUseError(json.RawMessage(resp))
		if got != want || isErr != ok {
			t.Fatalf("toolUseError(%s) = %q, %v", resp, got, isErr)
		}
	}
	f(`"<tool_use_error>Error: No such tool available: Glob</tool_use_error>"`, "Error: No such tool available: Glob", true)
	f(`[{"type":"text","text":"<tool_use_error>bad input</tool_use_error>"}]`, "bad input", true)
	// hookwatch's privacy preview of the text, whole or cut (even inside
	// an escape).
	f(`{"hookwatch_capture":"preview","bytes":71,"head":"\"<tool_use_error>Error: No such tool available: Glob</tool_use_error>\""}`,
		"Error: No such tool available: Glob", true)
	f(`{"hookwatch_capture":"preview","bytes":9000,"head":"\"<tool_use_error>Error: \\\"Glob\\\" is not","tail":"x\""}`,
		`Error: "Glob" is not`, true)
	f(`{"hookwatch_capture":"preview","bytes":9000,"head":"\"<tool_use_error>Error: \\u00e","tail":"x\""}`, "Error:", true)
	f(`{"hookwatch_capture":"preview","bytes":9000,"head":"\"<tool_use_error>Error: \\","tail":"x\""}`, "Error:", true)
	f(`{"hookwatch_capture":"preview","bytes":20,"head":"\"1\\tpackage main\""}`, "", false)
	f(`{"hookwatch_capture":"none","bytes":71}`, "", false)
	f(`{"hookwatch_capture":"preview","bytes":20,"head":"{\"<tool_use_error>\":1}"}`, "", false)
	f(`"1\tpackage main"`, "", false)
	f(`{"stdout":""}`, "", false)
	f(`[]`, "", false)
	f(``, "", false)
}

// TestTextReadersMatchEncodingJSON holds the readers of tool output to
// the readings encoding/json gives (the code they replaced, kept below as
// the reference) on every tool output of the payload corpus, on its privacy
// previews at several budgets, and on every cut of those previews' heads.
func TestTextReadersMatchEncodingJSON(t *testing.T) {
	var resps []json.RawMessage
	for _, p := range corpus.Load(t) {
		var m struct {
			Resp  json.RawMessage `json:"tool_response"`
			Calls []struct {
				Resp json.RawMessage `json:"tool_response"`
			} `json:"tool_calls"`
		}
		if json.Unmarshal(p.JSON, &m) != nil {
			t.Fatalf("%s: not an object", p.Label)
		}
		if m.Resp != nil {
			resps = append(resps, m.Resp)
		}
		for _, c := range m.Calls {
			resps = append(resps, c.Resp)
		}
	}
	if len(resps) < 30 {
		t.Fatalf("only %d tool outputs in the corpus", len(resps))
	}
	var all []json.RawMessage
	for _, r := range resps {
		all = append(all, r)
		for _, budget := range []int{24, 60, 200, 768} {
			p := map[string]json.RawMessage{"tool_response": r}
			privacy.Apply(p, privacy.Options{Capture: privacy.CapturePreview, PreviewBytes: budget, Redact: true})
			all = append(all, p["tool_response"])
			var prev map[string]any
			if json.Unmarshal(p["tool_response"], &prev) == nil {
				if head, ok := prev["head"].(string); ok {
					for n := 0; n <= len(head); n++ {
						prev["head"] = head[:n]
						b, _ := json.Marshal(prev)
						all = append(all, b)
					}
				}
			}
		}
	}
	ids, errs := 0, 0
	for _, r := range all {
		if got, want := jsonString(r), refString(bytes.TrimSpace(r)); got != want {
			t.Errorf("jsonString(%s) = %q, encoding/json read %q", r, got, want)
		}
		f, ok := agentFieldsOf(r)
		wantF, wantOK := refAgentFields(r)
		if f != wantF || ok != wantOK {
			t.Errorf("agentFieldsOf(%s) = %+v, %v; encoding/json read %+v, %v", r, f, ok, wantF, wantOK)
		}
		if id, _ := spawnedAgentID(r); id != "" {
			ids++
		}
		text, ok := responseText(r)
		wantText, wantOK := refResponseText(r)
		if text != wantText || ok != wantOK {
			t.Errorf("responseText(%s) = %q, %v; encoding/json read %q, %v", r, text, ok, wantText, wantOK)
		}
		if _, isErr := toolUseError(r); isErr {
			errs++
		}
	}
	if ids < 20 || errs < 20 {
		t.Fatalf("the corpus exercised %d agent ids and %d tool errors of %d outputs", ids, errs, len(all))
	}
	t.Logf("%d outputs: %d agent ids, %d tool errors", len(all), ids, errs)
}

// refAgentFields is agentFieldsOf as written with encoding/json.
func refAgentFields(resp json.RawMessage) (agentFields, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(resp, &obj) != nil {
		return agentFields{}, false
	}
	return agentFields{ids: [2]string{refString(obj[agentIDKeys[0]]), refString(obj[agentIDKeys[1]])}, nickname: refString(obj["nickname"])}, true
}

func refString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// refResponseText is responseText as written with encoding/json.
func refResponseText(resp json.RawMessage) (string, bool) {
	resp = bytes.TrimSpace(resp)
	var text string
	switch {
	case len(resp) == 0:
		return "", false
	case resp[0] == '"':
		text = refString(resp)
	case resp[0] == '{':
		var obj struct {
			Capture string `json:"hookwatch_capture"`
			Head    string `json:"head"`
		}
		if json.Unmarshal(resp, &obj) != nil || obj.Capture != "preview" || !strings.HasPrefix(obj.Head, `"`) {
			return "", false
		}
		text = refCutString(obj.Head)
	case resp[0] == '[':
		var blocks []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(resp, &blocks) != nil || len(blocks) == 0 {
			return "", false
		}
		text = blocks[0].Text
	default:
		return "", false
	}
	return text, true
}

// refCutString decodes a cut string literal by dropping bytes from its end
// until encoding/json accepts it.
func refCutString(lit string) string {
	for drop := 0; drop <= 6 && drop < len(lit); drop++ {
		s := lit[:len(lit)-drop]
		if !strings.HasSuffix(s, `"`) || len(s) == 1 || strings.HasSuffix(s, `\"`) {
			s += `"`
		}
		var out string
		if json.Unmarshal([]byte(s), &out) == nil {
			return out
		}
	}
	return ""
}

// TestDeniedText: the client's denial messages, wrapped or not, and what
// only looks like one.
func TestDeniedText(t *testing.T) {
	for text, want := range map[string]bool{
		"Permission to use Bash with command curl x has been denied.":                                         true,
		"<tool_use_error>Permission to use Read has been denied.</tool_use_error>":                            true,
		"Permission for this action has been denied. Reason: not allowed":                                     true,
		"Permission to edit /p/a.go has been denied.":                                                         true,
		"<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>": true,
		"The user doesn't want to proceed with this tool use. The tool use was rejected.":                     true,
		"PreToolUse:Bash hook error: Force pushes are not allowed.":                                           true,
		"PreToolUse:mcp__srv__tool hook error: no":                                                            true,
		"Permission to use Bash":                                               false,
		"PreToolUse:Bash hook ran fine":                                        false,
		"PreToolUse: hook error: x":                                            false,
		"Exit code 1\nPermission to use Bash has been denied.":                 false,
		"<tool_use_error>Error: No such tool available: Glob</tool_use_error>": false,
		"": false,
	} {
		if _, got := deniedText(text); got != want {
			t.Errorf("deniedText(%q) = %v, want %v", text, got, want)
		}
	}
}
