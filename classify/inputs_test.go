package classify

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/corpus"
)

// TestInputFieldsAgreeWithPayloads: every field of a known tool's
// tool_input in the real payloads of the corpus is one InputFields lists —
// but for calls the client refused for their input (InputValidationError):
// the model's typos, not the tool's fields. A client that adds a field
// fails this test when its payloads join the corpus.
func TestInputFieldsAgreeWithPayloads(t *testing.T) {
	seen := map[string]int{}
	var calls func(v any, visit func(map[string]any))
	calls = func(v any, visit func(map[string]any)) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["tool_input"].(map[string]any); ok {
				if _, ok := v["tool_name"].(string); ok {
					visit(v)
				}
			}
			for _, x := range v {
				calls(x, visit)
			}
		case []any:
			for _, x := range v {
				calls(x, visit)
			}
		}
	}
	for _, p := range corpus.Load(t) {
		var v any
		if err := json.Unmarshal(p.JSON, &v); err != nil {
			t.Fatalf("%s: %v", p.Label, err)
		}
		calls(v, func(c map[string]any) {
			tool := c["tool_name"].(string)
			fields, known := InputFields(tool)
			if !known {
				return
			}
			if resp, _ := json.Marshal(c["tool_response"]); strings.Contains(string(resp), "InputValidationError") {
				return
			}
			seen[tool]++
			for k := range c["tool_input"].(map[string]any) {
				if !slices.Contains(fields, k) {
					t.Errorf("%s: %s's tool_input has %q, which InputFields does not list", p.Label, tool, k)
				}
			}
		})
	}
	// The corpus holds calls of the common tools: the test reads them.
	for _, tool := range []string{"Bash", "Read", "Write", "Edit", "Grep", "Glob", "WebFetch", "Agent", "apply_patch"} {
		if seen[tool] == 0 {
			t.Errorf("no %s call in the corpus", tool)
		}
	}
}

// TestInputFieldsOfKnownTools: every tool InputFields knows is one Family
// knows by name, and MCP tools are not known.
func TestInputFieldsOfKnownTools(t *testing.T) {
	for _, tool := range ToolNames() {
		if fields, ok := InputFields(tool); ok && len(fields) == 0 {
			t.Errorf("%s: known, with no fields", tool)
		}
	}
	for _, tool := range []string{"Bash", "Read", "Grep", "Agent", "Task", "apply_patch", "TodoWrite"} {
		if _, ok := InputFields(tool); !ok || !slices.Contains(ToolNames(), tool) {
			t.Errorf("%s: InputFields %v, ToolNames has it %v", tool, ok, slices.Contains(ToolNames(), tool))
		}
	}
	if _, ok := InputFields("mcp__github__create_issue"); ok {
		t.Error("an MCP tool's arguments are its own")
	}
}
