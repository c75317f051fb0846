package event_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	corpuspkg "github.com/hookwatch/hookwatch/internal/corpus"
)

// TestCorpusUnknownFields lists, per capture and event, every field of the
// real payloads that the typed model (Common and the event's struct) does not
// name. The lenient decoder keeps such fields in Raw, so nothing is lost, but
// nothing reads them either: a new client's new fields must show up here as a
// diff of testdata/unknown_fields.golden to review, never as a silent drop.
// Values the model keeps opaque (json.RawMessage, such as tool_input) are not
// walked.
func TestCorpusUnknownFields(t *testing.T) {
	seen := map[string]int{}
	for _, c := range corpuspkg.Load(t) {
		p, err := event.Decode(c.JSON)
		if err != nil {
			t.Fatalf("%s: %v", c.Label, err)
		}
		capture, _, _ := strings.Cut(c.Label, ":")
		name := p.Name()
		if name == "" {
			name = "(unnamed)"
		}
		for _, f := range payloadUnknownFields(p) {
			seen[capture+"\t"+name+"\t"+f]++
		}
	}
	lines := make([]string, 0, len(seen))
	for k, n := range seen {
		lines = append(lines, fmt.Sprintf("%s\t%d", k, n))
	}
	slices.Sort(lines)
	var golden strings.Builder
	golden.WriteString("# capture\tevent\tfield the model does not know\tpayloads\n")
	for _, l := range lines {
		golden.WriteString(l + "\n")
	}
	checkGolden(t, "testdata/unknown_fields.golden", golden.String())
}

func TestPayloadUnknownFields(t *testing.T) {
	f := func(in string, want ...string) {
		t.Helper()
		p, err := event.Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		got := payloadUnknownFields(p)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: unknown fields %q, want %q", in, got, want)
		}
	}
	f(`{"hook_event_name":"Stop","session_id":"s","stop_hook_active":false}`)
	f(`{"hook_event_name":"Stop","session_id":"s","new_thing":1}`, "new_thing")
	f(`{"hook_event_name":"Stop","effort":{"level":"high","budget":3}}`, "effort.budget")
	// A field of another event is unknown on this one.
	f(`{"hook_event_name":"Stop","tool_name":"Bash"}`, "tool_name")
	// Opaque values are not walked; a mistyped struct is not either.
	f(`{"hook_event_name":"PreToolUse","tool_input":{"anything":1},"effort":"high"}`)
	f(`{"hook_event_name":"NoSuchEvent","source":"x"}`, "source")
}

// payloadUnknownFields returns the paths of p's fields that neither Common
// nor p's event struct names.
func payloadUnknownFields(p *event.Payload) []string {
	known := knownFields(reflect.TypeFor[event.Common]())
	if p.Event != nil {
		for k, v := range knownFields(reflect.TypeOf(p.Event).Elem()) {
			known[k] = v
		}
	}
	var unknown []string
	unknownFields(p.Raw, known, "", &unknown)
	return unknown
}

// knownFields maps the JSON names of t's fields, embedded structs flattened,
// to their types.
func knownFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k, v := range knownFields(f.Type) {
				out[k] = v
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f.Type
	}
	return out
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	optStringType  = reflect.TypeFor[event.OptString]()
)

// unknownFields appends to out the path of every member of obj that known
// does not name, and walks the members the model types as structs (or
// slices of structs).
func unknownFields(obj map[string]json.RawMessage, known map[string]reflect.Type, prefix string, out *[]string) {
	for key, val := range obj {
		typ, ok := known[key]
		if !ok {
			*out = append(*out, prefix+key)
			continue
		}
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		path := prefix + key
		if typ.Kind() == reflect.Slice && typ != rawMessageType {
			typ = typ.Elem()
			for typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			path += "[]"
			if typ.Kind() != reflect.Struct || typ == optStringType {
				continue
			}
			var elems []map[string]json.RawMessage
			if json.Unmarshal(val, &elems) != nil {
				continue // mistyped: the decoder reports it, not this test
			}
			for _, e := range elems {
				unknownFields(e, knownFields(typ), path+".", out)
			}
			continue
		}
		if typ.Kind() != reflect.Struct || typ == optStringType {
			continue
		}
		var sub map[string]json.RawMessage
		if json.Unmarshal(val, &sub) != nil {
			continue
		}
		unknownFields(sub, knownFields(typ), path+".", out)
	}
}
