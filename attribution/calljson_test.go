package attribution

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/internal/demo"
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

// fullCall returns a call with every field, nested ones included, set to a
// value that is not its zero.
func fullCall() *ToolCall {
	c := new(ToolCall)
	fill(reflect.ValueOf(c).Elem(), &filler{full: true})
	return c
}

// fuzzCall returns a call filled from data: which fields are set, to what.
func fuzzCall(data []byte) *ToolCall {
	c := new(ToolCall)
	fill(reflect.ValueOf(c).Elem(), &filler{data: data})
	return c
}

// filler reads the choices of fill from data (zeros past its end); full
// sets every value.
type filler struct {
	data []byte
	full bool
}

func (f *filler) byte() byte {
	if f.full {
		return 1
	}
	if len(f.data) == 0 {
		return 0
	}
	b := f.data[0]
	f.data = f.data[1:]
	return b
}

// Values that take the encoders' every path.
var (
	fillStrings = []string{"", "x", "Bash", "a<b>&c", "line\nbreak\t\"q\"\\", "ü\u2028\u2029…", "bad\xff\xfe", "\x00\x1f\x7f", "/proj/main.go"}
	fillRaws    = []string{"null", `{"a":1}`, ` { "a" : [1, 2, "x y"] } `, `"<b>&\u2028"`, "\"\u2028\u2029\"", `{"k":"v\\"<"}`, "[1,\n2]", "", "{", `{"a":}`, "1e5", "true"}
	fillTimes   = []time.Time{
		time.Date(2026, 11, 28, 17, 0, 0, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 5*3600+30*60)),
		time.Date(2026, 1, 2, 3, 4, 5, 1000, time.FixedZone("", -8*3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 24*3600)),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", -25*3600)),
		{},
	}
)

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// fill sets v, as f chooses.
func fill(v reflect.Value, f *filler) {
	switch {
	case v.Type() == timeType:
		t := fillTimes[0]
		if !f.full {
			t = fillTimes[int(f.byte())%len(fillTimes)]
		}
		v.Set(reflect.ValueOf(t))
		return
	case v.Type() == rawType:
		b := f.byte()
		switch {
		case f.full:
			v.SetBytes([]byte(fillRaws[2]))
		case b%8 == 0: // nil
		case b%8 == 1: // its own bytes
			n := min(int(f.byte()%32), len(f.data))
			v.SetBytes(append([]byte{}, f.data[:n]...))
			f.data = f.data[n:]
		default:
			v.SetBytes([]byte(fillRaws[int(b)%len(fillRaws)]))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		b := f.byte()
		switch {
		case f.full:
			v.SetString(fillStrings[3])
		case b%4 == 0: // its own bytes
			n := min(int(f.byte()%24), len(f.data))
			v.SetString(string(f.data[:n]))
			f.data = f.data[n:]
		default:
			v.SetString(fillStrings[int(b)%len(fillStrings)])
		}
	case reflect.Bool:
		v.SetBool(f.byte()%2 == 1)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(int8(f.byte())) << (f.byte() % 40))
	case reflect.Float64:
		v.SetFloat(float64(int8(f.byte())) / 7)
	case reflect.Pointer:
		if f.full || f.byte()%3 != 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), f)
		}
	case reflect.Slice:
		n := int(f.byte() % 4)
		if f.full {
			n = 2
		}
		if n == 3 && !f.full {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // empty, not nil
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(s.Index(i), f)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), f)
			}
		}
	default:
		panic("fill: no values for " + v.Type().String())
	}
}

// TestFullCallSetsEverything keeps fullCall honest: every field of the
// document is in its JSON.
func TestFullCallSetsEverything(t *testing.T) {
	var keys map[string]any
	if err := json.Unmarshal(mustJSON(t, fullCall()), &keys); err != nil {
		t.Fatal(err)
	}
	if want := countFields(reflect.TypeFor[ToolCall]()); len(keys) != want {
		t.Fatalf("a full call has %d members, ToolCall %d fields", len(keys), want)
	}
}

// countFields counts the exported fields of a struct, those of its embedded
// structs in their place.
func countFields(t reflect.Type) int {
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case !f.IsExported():
		case f.Anonymous:
			n += countFields(f.Type)
		default:
			n++
		}
	}
	return n
}
