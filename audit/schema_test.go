package audit_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hookwatch/hookwatch/audit"
)

// schemaBase is the $id prefix of the published schemas in docs/audit/.
const schemaBase = "https://github.com/hookwatch/hookwatch/docs/audit/"

// compileSchemas compiles the JSON Schema files of docs/audit, keyed by
// the file name they validate.
func compileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, name := range []string{"event.v1.schema.json", "tool_call.v1.schema.json"} {
		f, err := os.Open(filepath.Join("..", "docs", "audit", name))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.AddResource(schemaBase+name, doc); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for file, name := range map[string]string{audit.EventsFile: "event.v1.schema.json", audit.ToolCallsFile: "tool_call.v1.schema.json"} {
		s, err := c.Compile(schemaBase + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[file] = s
	}
	return out
}

// TestGoldenRecordsMatchSchemas validates every line of the golden trails
// against the published JSON Schemas, and holds the schema identifiers of
// the code to the schemas'.
func TestGoldenRecordsMatchSchemas(t *testing.T) {
	schemas := compileSchemas(t)
	tree := readTree(t, filepath.Join("testdata", "golden"))
	lines := 0
	for name, b := range tree {
		s := schemas[filepath.Base(name)]
		if s == nil {
			t.Fatalf("no schema for %s", name)
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(inst); err != nil {
				t.Errorf("%s:%d: %v", name, i+1, err)
			}
			lines++
		}
	}
	if lines < 300 {
		t.Fatalf("only %d golden lines validated", lines)
	}
	// The validator rejects what the schema forbids.
	bad := func(file, line, why string) {
		t.Helper()
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		if schemas[file].Validate(inst) == nil {
			t.Errorf("%s: a line %s validated", file, why)
		}
	}
	good := string(bytes.SplitN(tree[filepath.Join("claude-code-2.1.197", "0e2e0b5d-7136-4322-8086-c38ed16b10ad", audit.ToolCallsFile)], []byte("\n"), 2)[0])
	bad(audit.ToolCallsFile, strings.Replace(good, `"status":"rejected"`, `"status":"fine"`, 1), "with an unknown status")
	bad(audit.ToolCallsFile, strings.Replace(good, `"depth":0,`, ``, 1), "without depth")
	bad(audit.ToolCallsFile, strings.Replace(good, `"schema":"`+audit.ToolCallSchema+`"`, `"schema":"hookwatch.audit.tool_call/v2"`, 1), "of another version")
	bad(audit.EventsFile, good, "of the other stream")
}
