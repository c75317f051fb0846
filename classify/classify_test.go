package classify

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/corpus"
	"github.com/hookwatch/hookwatch/shell"
)

var update = flag.Bool("update", false, "rewrite the golden file")

// TestCapturesGolden classifies every tool call of the real captures:
// each gets a subtype other than "other", and the whole classification is
// kept in testdata/captures.golden.jsonl for review.
func TestCapturesGolden(t *testing.T) {
	var out bytes.Buffer
	seen := map[string]bool{}
	for _, p := range corpus.Load(t) {
		var pl struct {
			Event     string          `json:"hook_event_name"`
			ToolName  string          `json:"tool_name"`
			ToolInput json.RawMessage `json:"tool_input"`
			CWD       string          `json:"cwd"`
		}
		if err := json.Unmarshal(p.JSON, &pl); err != nil || pl.ToolName == "" || pl.Event != "PreToolUse" {
			continue
		}
		key := pl.ToolName + string(pl.ToolInput)
		if seen[key] {
			continue
		}
		seen[key] = true
		m := Call(pl.ToolName, pl.ToolInput, pl.CWD)
		if m.Subtype == "" || m.Subtype == SubtypeOther || m.Group == "" || m.Importance == "" {
			t.Errorf("%s: %s is not classified: %+v", p.Label, pl.ToolName, m)
		}
		line, _ := json.Marshal(struct {
			Tool string `json:"tool"`
			Meta
		}{pl.ToolName, m})
		fmt.Fprintf(&out, "%s\n", line)
	}
	if len(seen) < 30 {
		t.Fatalf("only %d distinct calls in the captures", len(seen))
	}
	const golden = "testdata/captures.golden.jsonl"
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("the classification of the captures differs from %s; run with -update and review the diff", golden)
	}
}

func TestCall(t *testing.T) {
	f := func(tool, input, wantSubtype string, wantEffect shell.Effect) {
		t.Helper()
		m := Call(tool, json.RawMessage(input), "/w")
		if m.Subtype != wantSubtype || m.Effect != wantEffect {
			t.Fatalf("%s %s: %s/%s, want %s/%s", tool, input, m.Subtype, m.Effect, wantSubtype, wantEffect)
		}
	}
	f("Bash", `{"command":"go test ./..."}`, SubtypeRunTest, shell.ExecuteCheck)
	f("Bash", `{"command":"npm install left-pad"}`, SubtypeInstallDependency, shell.Write)
	f("Bash", `{"command":"git commit -m x"}`, SubtypeGitCommit, shell.Write)
	f("exec_command", `{"cmd":"rm -rf build"}`, SubtypeDeleteFile, shell.Destructive)
	f("shell", `{"command":["bash","-lc","cat a.go"]}`, SubtypeReadFile, shell.ReadOnly)
	f("apply_patch", `{"command":"*** Begin Patch\n*** Delete File: a.go\n*** End Patch\n"}`, SubtypeDeleteFile, shell.Destructive)
	f("Read", `{"file_path":"a.go"}`, SubtypeReadFile, shell.ReadOnly)
	f("Edit", `{"file_path":"/w/a.go"}`, SubtypeModifyFile, shell.Write)
	f("WebSearch", `{"query":"x"}`, SubtypeWebSearch, shell.Network)
	f("Agent", `{"subagent_type":"Explore"}`, SubtypeDelegation, shell.ExecuteCheck)
	f("mcp__github__create_issue", `{}`, SubtypeMCPCall, "")
	f("Bash", `not json`, SubtypeRunCommand, shell.ExecuteCheck)

	m := Call("mcp__context7__resolve-library-id", nil, "")
	if m.MCPServer != "context7" || m.MCPTool != "resolve-library-id" || m.EntityName != "context7/resolve-library-id" {
		t.Fatalf("mcp: %+v", m)
	}
	m = Call("Bash", json.RawMessage(`{"command":"cat notes.txt > copy.txt"}`), "/w")
	if fmt.Sprint(m.FilesRead, m.FilesWritten) != "[/w/notes.txt] [/w/copy.txt]" {
		t.Fatalf("files of a command: %v %v", m.FilesRead, m.FilesWritten)
	}
	// A command whose target cannot be known may write anywhere, for the
	// rules; it names no file the call wrote.
	m = Call("Bash", json.RawMessage(`{"command":"eval \"$X\" > out.txt"}`), "/w")
	if !m.Command.Unknown || !slices.Contains(m.Command.Writes, shell.Anywhere) || fmt.Sprint(m.FilesWritten) != "[/w/out.txt]" {
		t.Fatalf("an unknown command: writes %v, files written %v", m.Command.Writes, m.FilesWritten)
	}
}

// FuzzCall holds Call's reading of a call's input equal to encoding/json's
// (json.Unmarshal into a map, then Input) for any input, valid or not.
func FuzzCall(f *testing.F) {
	for _, seed := range []string{
		`{"command":"go test ./..."}`, `{"cmd":"rm -rf build"}`, `{"command":["bash","-lc","cat a.go"]}`,
		`{"command":["a",1,null,{"b":"c"},"d e"]}`, `{"file_path":"a.go","file_path":{"x":1}}`,
		`{"url":"https://x\u00e9\ud800"}`, `{"pattern":"\u0000","path":"src"}`, `{"command":[]}`,
		`{"a":1} x`, `{"command":"x"`, `{"\u0063md":"ls"}`, "{\"command\":\"\xff\"}", `{}`,
		`{"command":"ls","n":1e400}`,
	} {
		f.Add("Bash", []byte(seed))
	}
	f.Add("shell", []byte(`{"command":["git","status"]}`))
	f.Add("apply_patch", []byte(`{"input":"*** Begin Patch\n*** Add File: b.go\n*** End Patch\n"}`))
	f.Add("Read", []byte(`{"notebook_path":"n.ipynb"}`))
	f.Add("WebFetch", []byte(`{"url":"https://example.com"}`))
	f.Add("Task", []byte(`{"subagent_type":"Explore"}`))
	f.Add("Edit", []byte(`{"file_path":"a.go","old_string":"x","new_string":"y"}`))
	f.Add("Grep", []byte(`{"pattern":"func","path":"src","query":"q"}`))
	f.Add("TaskCreate", []byte(`{"subject":"s","taskId":"1","task_id":"2"}`))
	f.Add("SendMessage", []byte(`{"to":"a","agent_type":"b","description":"c"}`))
	f.Add("WebSearch", []byte(`{"query":"go"}`))
	f.Add("NotebookEdit", []byte(`{"notebook_path":"n.ipynb"}`))
	f.Fuzz(func(t *testing.T, tool string, input []byte) {
		var in map[string]any
		if len(input) > 0 && input[0] == '{' {
			_ = json.Unmarshal(input, &in) // as Call did: a number out of range leaves the rest
		}
		want := Input(tool, in, "/w")
		if got := Call(tool, input, "/w"); !reflect.DeepEqual(got, want) {
			t.Fatalf("Call(%q, %q) = %+v, want %+v", tool, input, got, want)
		}
	})
}

// TestInputKeys holds inputKeys to the members Input reads: a str call or a
// commandOf key missing from it would read nothing.
func TestInputKeys(t *testing.T) {
	src, err := os.ReadFile("classify.go")
	if err != nil {
		t.Fatal(err)
	}
	read := regexp.MustCompile(`str\("(\w+)"\)`).FindAllSubmatch(src, -1)
	if len(read) < 10 {
		t.Fatalf("only %d str calls found in classify.go", len(read))
	}
	keys := []string{"command", "cmd"} // commandOf
	for _, m := range read {
		keys = append(keys, string(m[1]))
	}
	for _, k := range keys {
		if !inputKeys[k] {
			t.Errorf("Input reads %q, which is not in inputKeys", k)
		}
	}
}

// TestPatchFiles: the files of an apply_patch input are those its
// FilesWritten resolves, whichever member holds the patch.
func TestPatchFiles(t *testing.T) {
	patch := `*** Begin Patch\n*** Add File: a.md\n+x\n*** Update File: b.go\n*** Move to: c.go\n@@\n-y\n+z\n*** End Patch\n`
	want := []event.PatchFile{{Op: event.PatchAdd, Path: "a.md"}, {Op: event.PatchUpdate, Path: "b.go", MoveTo: "c.go"}}
	for _, input := range []string{`{"command":"` + patch + `"}`, `{"input":"` + patch + `"}`} {
		got := PatchFiles(json.RawMessage(input))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("PatchFiles(%s) = %+v, want %+v", input, got, want)
		}
		m := Call(event.ApplyPatch, json.RawMessage(input), "/w")
		if !reflect.DeepEqual(m.FilesWritten, []string{"/w/a.md", "/w/b.go", "/w/c.go"}) {
			t.Errorf("FilesWritten of %s = %v", input, m.FilesWritten)
		}
	}
	for _, input := range []string{``, `null`, `{"command":1}`, `{"path":"x"}`, `{"command":"not a patch"}`} {
		if got := PatchFiles(json.RawMessage(input)); len(got) != 0 {
			t.Errorf("PatchFiles(%s) = %+v, want none", input, got)
		}
	}
}
