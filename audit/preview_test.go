package audit

import (
	"bytes"
	"encoding/json"
	"testing"
)

// previewJSON is Preview as encoding/json reads it (the capture object as
// privacy.ReadCapture reads it: exact names), the reference the scanner must
// agree with.
func previewJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return cut(s)
	}
	// A capture object: its three members by their exact names, each a
	// string or null.
	var obj map[string]json.RawMessage
	if raw[0] == '{' && json.Unmarshal(raw, &obj) == nil {
		var kept [3]string
		valid := true
		for i, name := range []string{"hookwatch_capture", "head", "tail"} {
			if v, ok := obj[name]; ok && string(v) != "null" && json.Unmarshal(v, &kept[i]) != nil {
				valid = false
			}
		}
		if valid && kept[0] != "" && kept[0] != "patch" {
			if kept[2] != "" {
				return cut(kept[1] + " … " + kept[2])
			}
			return cut(kept[1])
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return cut(string(raw))
	}
	return cut(b.String())
}

func TestPreview(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		if got := Preview(json.RawMessage(raw)); got != want {
			t.Fatalf("Preview(%s) = %q, want %q", raw, got, want)
		}
		if ref := previewJSON(json.RawMessage(raw)); ref != want {
			t.Fatalf("encoding/json reads %s as %q, want %q", raw, ref, want)
		}
	}
	f(``, "")
	f(` null `, "")
	f(`"a\nb \u00e9"`, "a\nb é")
	f(`"bad \x"`, `"bad \x"`)
	f(`{"hookwatch_capture":"preview","bytes":9,"head":"abc","tail":"xyz"}`, "abc … xyz")
	f(`{"hookwatch_capture":"preview","bytes":9,"head":"a\"c"}`, `a"c`)
	f(`{"HEAD":"h","hookwatch_capture":"preview","Tail":"t","tail":"u"}`, " … u") // names match exactly
	f(`{"hookwatch_capture":"preview","head":null,"tail":"t"}`, " … t")
	f(`{"hookwatch_capture":"","head":"h"}`, `{"hookwatch_capture":"","head":"h"}`)
	f(`{"hookwatch_capture":"preview","head":1}`, `{"hookwatch_capture":"preview","head":1}`)
	f(`{"hookwatch_capture":"preview","head":"h"`, `{"hookwatch_capture":"preview","head":"h"`)
	f(`{"hookwatch_capture":"preview", "other":[1, 2],"head":"h"}`, "h")
	f(`{ "file_path" : "/etc/hosts" }`, `{"file_path":"/etc/hosts"}`)
	// An apply_patch input reduced to its headers is shown as it is.
	f(`{"command":"*** Begin Patch\n*** Add File: a.md\n*** End Patch\n","hookwatch_capture":"patch","bytes":72}`,
		`{"command":"*** Begin Patch\n*** Add File: a.md\n*** End Patch\n","hookwatch_capture":"patch","bytes":72}`)
}

// FuzzPreview holds Preview to what encoding/json reads.
func FuzzPreview(f *testing.F) {
	for _, s := range []string{`"x"`, `{"hookwatch_capture":"preview","head":"a","tail":"b"}`, `{"command":"p","hookwatch_capture":"patch"}`, `{"HookWatch_Capture":"p","HEAD":"\u00e9"}`, `[1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if got, want := Preview(json.RawMessage(raw)), previewJSON(json.RawMessage(raw)); got != want {
			t.Fatalf("Preview(%q) = %q, encoding/json reads %q", raw, got, want)
		}
	})
}
