package privacy

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/secrettest"
	"github.com/hookwatch/hookwatch/redact"
)

// TestSamplesCoverEveryKind holds the samples to the kinds package redact
// documents, and each sample to its kind.
func TestSamplesCoverEveryKind(t *testing.T) {
	doc, err := os.ReadFile("../redact/redact.go")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range secrettest.Samples() {
		have[s.Kind] = true
		out, n := redact.String(s.Text)
		if n == 0 || strings.Contains(out, s.Secret) || !strings.Contains(out, "[REDACTED:"+s.Kind+"]") {
			t.Errorf("sample of %s is not redacted as one: %q", s.Kind, out)
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

// stored returns what the hook stores of a payload: the agent's bytes when
// privacy changed nothing, else — or when the payload held invalid UTF-8 or
// repeated a key — the re-encoded payload (ingest's payloadJSON; ingest's
// tests hold the pipeline itself to the same placements).
func stored(t testing.TB, payload []byte, o Options) []byte {
	p, err := event.Decode(payload)
	if err != nil {
		t.Fatalf("cannot decode %s: %v", payload, err)
	}
	if !Apply(p.Raw, o) && !p.InvalidUTF8 && !p.RepeatedKeys {
		return payload
	}
	out, err := json.Marshal(p.Raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoSecretStored places a secret of every kind everywhere a payload
// carries text, written every way JSON allows, and finds none of them in
// what the hook would store, in any capture mode.
func TestNoSecretStored(t *testing.T) {
	opts := []Options{DefaultOptions(), {Capture: CaptureFull, Redact: true}, {Capture: CaptureNone, Redact: true},
		{Capture: CapturePreview, PreviewBytes: 64, Redact: true}}
	for _, s := range secrettest.Samples() {
		for _, pl := range secrettest.Placements() {
			for _, l := range secrettest.Literals {
				payload := []byte(pl.Payload(l.Lit, s.Text))
				if !json.Valid(payload) {
					t.Fatalf("%s, %s: invalid payload %s", pl.Name, l.Name, payload)
				}
				for _, o := range opts {
					out := stored(t, payload, o)
					if secrettest.Leaks(out, s.Secret) {
						t.Errorf("%s in %s (%s, capture %s/%d): stored in clear: %s", s.Kind, pl.Name, l.Name, o.Capture, o.PreviewBytes, out)
						continue
					}
					if again := stored(t, out, o); !bytes.Equal(again, out) {
						t.Errorf("%s in %s (%s, capture %s): a second pass changed\n%s\n%s", s.Kind, pl.Name, l.Name, o.Capture, out, again)
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
	all := secrettest.Samples()
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
				q, _ := json.Marshal("\n" + s.Text + "\n")
				nv := concat(val[:str.End], q[1:len(q)-1], val[str.End:])
				top[member] = nv
				payload, _ := json.Marshal(top)
				top[member] = val
				if out := stored(t, payload, DefaultOptions()); secrettest.Leaks(out, s.Secret) {
					t.Errorf("%s: %s in %s stored in clear: %s", p.Label, s.Kind, member, out)
				}
				if out := stored(t, payload, Options{Capture: CaptureFull, Redact: true}); secrettest.Leaks(out, s.Secret) {
					t.Errorf("%s: %s in %s (full capture) stored in clear: %s", p.Label, s.Kind, member, out)
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d strings in the corpus's tool inputs and outputs", n)
	}
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// FuzzNoSecretStored embeds a secret at a random place of a random payload,
// whose member may come again after it, and checks that it is never stored
// in clear.
func FuzzNoSecretStored(f *testing.F) {
	f.Add([]byte(`{"stdout":"a\nb","stderr":""}`), uint8(0), uint16(3), uint8(0))
	f.Add([]byte(`[{"type":"text","text":"x"}]`), uint8(5), uint16(1), uint8(1))
	f.Add([]byte(`"plain text"`), uint8(9), uint16(2), uint8(2))
	f.Add([]byte(`{"k":{"n":[1,"a\u0041",{"x":"y"}]}}`), uint8(20), uint16(7), uint8(3))
	f.Add([]byte("not json at all"), uint8(11), uint16(0), uint8(4))
	f.Add([]byte(`{"type":"text","file":{"filePath":"/w/a.go","content":"package a\n","numLines":1}}`), uint8(3), uint16(40), uint8(70))
	f.Add([]byte(`"{\"agent_id\":\"01a1\",\"nickname\":\"Godel\"}"`), uint8(7), uint16(9), uint8(200))
	f.Add([]byte(`{"stdout":"a\nb","stderr":""}`), uint8(0x83), uint16(3), uint8(0))
	f.Add([]byte(`{"hookwatch_capture":"none","bytes":"x","bytes":5}`), uint8(0x85), uint16(2), uint8(0))
	all := secrettest.Samples()
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
		if s.Text != s.Secret {
			seps = lineSeps
		}
		sep := seps[int(how)%len(seps)]
		l := secrettest.Literals[int(how/8)%len(secrettest.Literals)]
		lit := l.Lit(sep + s.Text + "\n")
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
		payload := []byte(`{` + secrettest.IDs + `,"hook_event_name":"PostToolUse","tool_name":"X",` + lit + `:0,"` + member + `":` + string(value) + `}`)
		if which&0x80 != 0 {
			// The member again, after: readers keep this copy alone.
			payload = append(payload[:len(payload)-1], `,"`+member+`":"x"}`...)
		}
		if !json.Valid(payload) {
			return // a secret cut into a \u escape's digits
		}
		for _, o := range []Options{DefaultOptions(), {Capture: CaptureFull, Redact: true}} {
			if out := stored(t, payload, o); secrettest.Leaks(out, s.Secret) {
				t.Fatalf("%s stored in clear (capture %s):\n%s\n%s", s.Kind, o.Capture, payload, out)
			}
		}
	})
}
