package attribution

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/jsontest"
)

// TestToolCallJSON holds ToolCall.AppendJSON to json.Marshal: on every call
// of the real captures and of the demo's sessions (the model benchmark's,
// and one whose payloads are full of HTML), and on calls with every field
// filled in at random (a field the encoder does not write fails it).
func TestToolCallJSON(t *testing.T) {
	n := 0
	sessions := corpora(t)
	start := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	sessions["demo-big"] = demo.Big(demo.BigSpec{SessionID: "big", Start: start, Events: 5000, Agents: 10, Project: "p", Seed: 1})
	sessions["demo-xss"] = demo.XSS(start)
	for name, envs := range sessions {
		for _, s := range Build(envs).Sessions {
			for _, c := range s.ToolCalls {
				checkCallJSON(t, name, c)
				n++
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d calls in the captures", n)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 4096)
	for i := range 3000 {
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		c := fuzzCall(data)
		if i == 0 {
			// Every field set: what a field left out would show.
			c = fullCall()
		}
		checkCallJSON(t, "random", c)
	}
}

func FuzzToolCallJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add([]byte("\x01\x02\x03 <a&b> \xe2\x80\xa8 {\"x\": [1, 2]}\x00\x07\x09"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCallJSON(t, "fuzz", fuzzCall(data))
	})
}

func checkCallJSON(t *testing.T, from string, c *ToolCall) {
	t.Helper()
	want, wantErr := json.Marshal(c)
	got, err := c.AppendJSON([]byte("prefix"))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: AppendJSON error %v, json.Marshal's %v", from, err, wantErr)
	}
	if err == nil && string(got) != "prefix"+string(want) {
		t.Fatalf("%s: AppendJSON\n%s\njson.Marshal\n%s", from, got, want)
	}
	if err != nil && string(got) != "prefix" {
		t.Fatalf("%s: AppendJSON left %q after an error", from, got)
	}
}

// TestDecodedCallHasDetail: a call decoded from the document of a call
// with no detail has one to read, as the model's calls do.
func TestDecodedCallHasDetail(t *testing.T) {
	doc, err := (&ToolCall{ToolUseID: "toolu_1", CallDetail: &noDetail}).AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var c ToolCall
	if err := json.Unmarshal(doc, &c); err != nil {
		t.Fatal(err)
	}
	if c.CallDetail == nil || c.CallDetail == &noDetail {
		t.Fatalf("decoded %s: CallDetail %p", doc, c.CallDetail)
	}
	if c.Error != "" || c.Decisions != nil {
		t.Fatalf("decoded %s: %+v", doc, *c.CallDetail)
	}
}

// fullCall returns a call with every field, nested ones included, set to a
// value that is not its zero.
func fullCall() *ToolCall {
	c := new(ToolCall)
	jsontest.Full(c)
	return c
}

// fuzzCall returns a call filled from data: which fields are set, to what.
func fuzzCall(data []byte) *ToolCall {
	c := new(ToolCall)
	jsontest.Fill(c, data)
	return c
}

// TestFullCallSetsEverything keeps fullCall honest: every field of the
// document is in its JSON.
func TestFullCallSetsEverything(t *testing.T) {
	var keys map[string]any
	if err := json.Unmarshal(mustJSON(t, fullCall()), &keys); err != nil {
		t.Fatal(err)
	}
	if want := jsontest.Fields(reflect.TypeFor[ToolCall]()); len(keys) != want {
		t.Fatalf("a full call has %d members, ToolCall %d fields", len(keys), want)
	}
}

// BenchmarkToolCallJSON encodes the calls of the model benchmark's session
// (internal/demo.Big: 20,000 events) with AppendJSON and with json.Marshal;
// ns/op and allocs/op are per call.
func BenchmarkToolCallJSON(b *testing.B) {
	envs := demo.Big(demo.BigSpec{SessionID: "big", Start: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), Events: 20_000, Agents: 50, Project: "p", Seed: 1})
	calls := Build(envs).Sessions[0].ToolCalls
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for i := 0; b.Loop(); i++ {
			buf, _ = calls[i%len(calls)].AppendJSON(buf[:0])
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := json.Marshal(calls[i%len(calls)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
