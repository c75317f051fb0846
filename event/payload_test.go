package event_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	corpuspkg "github.com/hookwatch/hookwatch/internal/corpus"
)

var update = flag.Bool("update", false, "rewrite golden files")

// corpus returns every payload of the real captures in testdata/payloads,
// unwrapped from the capture wrappers, with a label naming its origin.
func corpus(t testing.TB) (labels []string, payloads [][]byte) {
	t.Helper()
	for _, p := range corpuspkg.Load(t) {
		labels = append(labels, p.Label)
		payloads = append(payloads, p.JSON)
	}
	return labels, payloads
}

func generic(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	return v
}

// TestCorpusRoundTrip decodes every real payload, re-encodes it and checks that
// no field was lost or changed, and that the typed view matches a golden file.
func TestCorpusRoundTrip(t *testing.T) {
	labels, payloads := corpus(t)
	var golden strings.Builder
	for i, raw := range payloads {
		p, err := event.Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", labels[i], err)
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("%s: re-encode: %v", labels[i], err)
		}
		if !reflect.DeepEqual(generic(t, raw), generic(t, out)) {
			t.Errorf("%s: round trip changed the payload\n in: %s\nout: %s", labels[i], raw, out)
		}
		fmt.Fprintf(&golden, "%s\t%s\n", labels[i], summary(p))
	}
	checkGolden(t, "testdata/corpus.golden", golden.String())
}

// summary renders the typed view of a payload on one line.
func summary(p *event.Payload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "event=%s session=%s agent=%q", p.Name(), p.SessionID, p.AgentID)
	if len(p.Mistyped) > 0 {
		// A real payload's field of a type the model does not expect.
		fmt.Fprintf(&b, " mistyped=%v", p.Mistyped)
	}
	if p.AgentType.Set {
		fmt.Fprintf(&b, " agent_type=%q", p.AgentType.Value)
	}
	if p.PromptID != "" {
		fmt.Fprintf(&b, " prompt=%s", p.PromptID)
	}
	if tc := p.Tool(); tc != nil {
		fmt.Fprintf(&b, " tool=%s id=%s input=%dB", tc.ToolName, tc.ToolUseID, len(tc.ToolInput))
	}
	switch e := p.Event.(type) {
	case *event.SessionStartInput:
		fmt.Fprintf(&b, " source=%s", e.Source)
		if e.ContextTokens != nil {
			fmt.Fprintf(&b, " context_tokens=%g", *e.ContextTokens)
		}
		if e.SecondsSinceLastResponse != nil {
			fmt.Fprintf(&b, " idle_s=%g", *e.SecondsSinceLastResponse)
		}
		if e.PromptCacheLikelyExpired != nil {
			fmt.Fprintf(&b, " cache_expired=%v", *e.PromptCacheLikelyExpired)
		}
		if e.EstimatedCacheWriteUSD != nil {
			fmt.Fprintf(&b, " cache_write_usd=%g", *e.EstimatedCacheWriteUSD)
		}
	case *event.PostToolUseInput:
		if e.DurationMS != nil {
			fmt.Fprintf(&b, " duration_ms=%g", *e.DurationMS)
		}
		fmt.Fprintf(&b, " response=%dB", len(e.ToolResponse))
	case *event.PostToolUseFailureInput:
		fmt.Fprintf(&b, " error=%q", firstLine(e.Error))
	case *event.PostToolBatchInput:
		for _, c := range e.ToolCalls {
			fmt.Fprintf(&b, " [%s %s]", c.ToolName, c.ToolUseID)
		}
	case *event.SubagentStopInput:
		fmt.Fprintf(&b, " transcript=%s", filepath.Base(e.AgentTranscriptPath))
	case *event.CompactInput:
		fmt.Fprintf(&b, " trigger=%s", e.Trigger)
	case *event.SessionEndInput:
		fmt.Fprintf(&b, " reason=%s", e.Reason)
	case *event.StatusLineInput:
		fmt.Fprintf(&b, " model=%s cost=%g", e.Model.ID, e.Cost.TotalCostUSD)
	case nil:
		b.WriteString(" untyped")
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the decoded corpus (run go test -update and review the diff)\n got:\n%s", path, got)
	}
}

func TestDecodeLenient(t *testing.T) {
	f := func(in string, check func(p *event.Payload) string) {
		t.Helper()
		p, err := event.Decode([]byte(in))
		if err != nil {
			t.Fatalf("Decode(%s): %v", in, err)
		}
		if msg := check(p); msg != "" {
			t.Errorf("Decode(%s): %s", in, msg)
		}
		out, _ := json.Marshal(p)
		if !reflect.DeepEqual(generic(t, []byte(in)), generic(t, out)) && json.Valid([]byte(in)) {
			t.Errorf("Decode(%s): re-encoded as %s", in, out)
		}
	}
	// A number where a string belongs is read as its text.
	f(`{"hook_event_name":"PreToolUse","session_id":123,"tool_name":"Bash"}`, func(p *event.Payload) string {
		if p.SessionID != "123" || fmt.Sprint(p.Mistyped) != "[session_id]" {
			return fmt.Sprintf("session_id = %q, mistyped %v", p.SessionID, p.Mistyped)
		}
		return ""
	})
	// tool_response as a string where an object is usual.
	f(`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":"plain text"}`, func(p *event.Payload) string {
		e, ok := p.Event.(*event.PostToolUseInput)
		if !ok || string(e.ToolResponse) != `"plain text"` {
			return fmt.Sprintf("tool_response = %#v", p.Event)
		}
		return ""
	})
	// An object where a string belongs leaves the typed field empty but keeps the raw value.
	f(`{"hook_event_name":"PreToolUse","tool_name":{"x":1},"tool_use_id":"toolu_1"}`, func(p *event.Payload) string {
		if p.Tool().ToolName != "" || p.Tool().ToolUseID != "toolu_1" || fmt.Sprint(p.Mistyped) != "[tool_name]" {
			return fmt.Sprintf("tool = %+v", p.Tool())
		}
		return ""
	})
	// agent_type "" (the compaction agent) is not the same as absent.
	f(`{"hook_event_name":"SubagentStop","agent_id":"a1","agent_type":""}`, func(p *event.Payload) string {
		if !p.AgentType.Set || p.AgentType.Value != "" || !p.IsSubagent() {
			return fmt.Sprintf("agent_type = %+v", p.AgentType)
		}
		return ""
	})
	f(`{"hook_event_name":"SubagentStop","agent_id":"a1"}`, func(p *event.Payload) string {
		if p.AgentType.Set {
			return "absent agent_type reads as set"
		}
		return ""
	})
	// null is absent.
	f(`{"hook_event_name":"PreCompact","custom_instructions":null,"agent_type":null}`, func(p *event.Payload) string {
		if p.AgentType.Set {
			return "null agent_type reads as set"
		}
		return ""
	})
	// Unknown events and fields are kept.
	f(`{"hook_event_name":"FutureEvent","brand_new":{"a":[1,2]}}`, func(p *event.Payload) string {
		if p.Event != nil || p.Name() != "FutureEvent" {
			return fmt.Sprintf("event = %#v", p.Event)
		}
		return ""
	})
	// Missing hook_event_name.
	f(`{"session_id":"s"}`, func(p *event.Payload) string {
		if p.Name() != "" {
			return "name = " + p.Name()
		}
		return ""
	})
	// statusLine has no hook_event_name.
	f(`{"session_id":"s","model":{"id":"m"},"cost":{"total_cost_usd":0.5}}`, func(p *event.Payload) string {
		e, ok := p.Event.(*event.StatusLineInput)
		if !ok || e.Model.ID != "m" || p.Name() != event.StatusLine {
			return fmt.Sprintf("event = %#v", p.Event)
		}
		return ""
	})
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{"", "   ", "not json", "[1,2]", `"str"`, "42", "null", `{"a":`, `{"a":1} trailing`,
		// Blanks to Unicode, not to JSON: encoding/json refuses them too.
		"\f{}", "{}\f", "\v{}", "{}\u00a0", "\u0085{}"} {
		if _, err := event.Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) = nil error, want one", in)
		}
	}
	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	if _, err := event.Decode([]byte(deep)); err == nil {
		t.Errorf("Decode(10000 levels) = nil error")
	}
}

func TestDecodeInvalidUTF8(t *testing.T) {
	p, err := event.Decode([]byte("{\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"a\xffb\"}"))
	if err != nil {
		t.Fatal(err)
	}
	e := p.Event.(*event.UserPromptSubmitInput)
	if e.Prompt != "a\uFFFDb" {
		t.Errorf("prompt = %q", e.Prompt)
	}
	out, _ := json.Marshal(p)
	if !json.Valid(out) || !bytes.Contains(out, []byte("\uFFFD")) {
		t.Errorf("re-encoded %q", out)
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	prev := ""
	buf := []byte("x")
	for i := 0; i < 1000; i++ {
		id := event.NewID(timeAt(int64(i)))
		if i%2 == 1 {
			// AppendNewID makes the same ids, after what dst holds.
			buf = event.AppendNewID(buf[:1], timeAt(int64(i)))
			if buf[0] != 'x' {
				t.Fatalf("AppendNewID overwrote dst: %q", buf)
			}
			id = string(buf[1:])
		}
		if len(id) != 36 || id[14] != '7' || !strings.ContainsRune("89ab", rune(id[19])) {
			t.Fatalf("NewID = %q, not a UUIDv7", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		if id[:13] < prev {
			t.Fatalf("ids not ordered by time: %s after %s", id, prev)
		}
		prev = id[:13]
	}
}

func FuzzDecode(f *testing.F) {
	_, payloads := corpus(f)
	for _, p := range payloads {
		f.Add(p)
	}
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_input":"x","session_id":[1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := event.Decode(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		q, err := event.Decode(out)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", out, err)
		}
		if p.Name() != q.Name() || p.SessionID != q.SessionID || p.AgentID != q.AgentID || p.AgentType != q.AgentType {
			t.Fatalf("typed view changed after a round trip: %+v vs %+v", p.Common, q.Common)
		}
		// A key repeats as encoding/json reads the keys; the re-encoding
		// holds each once.
		if want := repeatsTopLevelKey(t, data); p.RepeatedKeys != want {
			t.Fatalf("Decode(%q).RepeatedKeys = %v, want %v", data, p.RepeatedKeys, want)
		}
		if q.RepeatedKeys {
			t.Fatalf("the re-encoding %q repeats a key", out)
		}
		// The views that share the members' bytes are the views that copy
		// them.
		raw, invalidUTF8, err := event.Split(data)
		if err != nil {
			t.Fatalf("Split refuses what Decode reads: %v", err)
		}
		shared := event.FromObjectShared(raw)
		shared.InvalidUTF8, shared.RepeatedKeys = invalidUTF8, p.RepeatedKeys
		if !reflect.DeepEqual(shared, p) {
			t.Fatalf("FromObjectShared of %q:\n%+v\nDecode:\n%+v", data, shared, p)
		}
	})
}

// repeatsTopLevelKey reports whether a top-level key of the JSON object
// data comes twice, the keys read by encoding/json's tokenizer.
func repeatsTopLevelKey(t *testing.T, data []byte) bool {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(bytes.ToValidUTF8(data, []byte("\uFFFD"))))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%q: not an object to encoding/json: %v %v", data, tok, err)
	}
	seen := map[string]bool{}
	repeats := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		k := tok.(string)
		repeats = repeats || seen[k]
		seen[k] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
	}
	return repeats
}

// TestDecodeRepeatedKeys: a key that comes twice, written alike or by
// another escape, keeps its last value and is reported; keys that differ
// only by case are two keys.
func TestDecodeRepeatedKeys(t *testing.T) {
	f := func(in string, want bool, prompt string) {
		t.Helper()
		p, err := event.Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if p.RepeatedKeys != want || repeatsTopLevelKey(t, []byte(in)) != want {
			t.Errorf("Decode(%s).RepeatedKeys = %v, want %v", in, p.RepeatedKeys, want)
		}
		if e, ok := p.Event.(*event.UserPromptSubmitInput); !ok || e.Prompt != prompt {
			t.Errorf("Decode(%s): prompt %+v, want %q", in, p.Event, prompt)
		}
	}
	f(`{"hook_event_name":"UserPromptSubmit","prompt":"a"}`, false, "a")
	f(`{"hook_event_name":"UserPromptSubmit","prompt":"a","prompt":"b"}`, true, "b")
	f(`{"hook_event_name":"UserPromptSubmit","pro\u006dpt":"a","prompt":"b"}`, true, "b")
	f(`{"hook_event_name":"UserPromptSubmit","prompt":"b","pro\u006dpt":"c"}`, true, "c")
	f(`{"hook_event_name":"UserPromptSubmit","Prompt":"a","prompt":"b"}`, false, "b")
	f(`{"hook_event_name":"UserPromptSubmit","x":{"k":1,"k":2},"prompt":"b"}`, false, "b") // nested: not the top level's
}

// TestScalarsAsEncodingJSON: the hand-read scalars and effort accept and
// refuse exactly what encoding/json does, with the same values, so the
// typed view does not depend on which reader ran.
func TestScalarsAsEncodingJSON(t *testing.T) {
	vals := []string{`true`, `false`, `1`, `-2.5`, `1e3`, `1e400`, `"x"`, `"12"`, `[]`, `{}`, `{"level":"high"}`, `{"level":3}`, `{"level":null}`, `{"other":1,"level":"max"}`, `99999999999999999999`}
	for _, v := range vals {
		in := `{"hook_event_name":"PostToolUseFailure","is_interrupt":` + v + `,"duration_ms":` + v + `,"effort":` + v + `}`
		p, err := event.Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		e := p.Event.(*event.PostToolUseFailureInput)
		mistyped := fmt.Sprint(p.Mistyped)
		f := func(key string, got any, dst any) {
			t.Helper()
			err := json.Unmarshal([]byte(v), dst)
			reported := strings.Contains(mistyped, key)
			switch {
			case err != nil && !reported:
				t.Errorf("%s: encoding/json refuses it for %s (%v), Decode reads %v", v, key, err, got)
			case err == nil && reported:
				t.Errorf("%s: encoding/json reads it for %s, Decode reports it mistyped", v, key)
			case err == nil && fmt.Sprint(got) != fmt.Sprint(reflect.ValueOf(dst).Elem().Interface()):
				t.Errorf("%s: %s = %v, encoding/json %v", v, key, got, reflect.ValueOf(dst).Elem().Interface())
			}
		}
		var b bool
		var fl float64
		var ef event.Effort
		f("is_interrupt", deref(e.IsInterrupt), &b)
		f("duration_ms", deref(e.DurationMS), &fl)
		f("effort", deref(p.Effort), &ef)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
