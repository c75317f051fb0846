package event

import (
	"reflect"
	"testing"
)

func TestPatchFiles(t *testing.T) {
	f := func(patch string, want []PatchFile, headers string) {
		t.Helper()
		if got := PatchFiles(patch); !reflect.DeepEqual(got, want) {
			t.Errorf("PatchFiles(%q) = %+v, want %+v", patch, got, want)
		}
		h := PatchHeaders(patch)
		if h != headers {
			t.Errorf("PatchHeaders(%q) = %q, want %q", patch, h, headers)
		}
		if PatchHeaders(h) != h || !reflect.DeepEqual(PatchFiles(h), PatchFiles(patch)) {
			t.Errorf("the headers of %q do not keep the files", patch)
		}
	}
	// The patch of the real capture (codex-0.169.jsonl, r2).
	f("*** Begin Patch\n*** Add File: notes.md\n+# Notes\n*** End Patch\n",
		[]PatchFile{{Op: PatchAdd, Path: "notes.md"}},
		"*** Begin Patch\n*** Add File: notes.md\n*** End Patch\n")
	f("*** Begin Patch\r\n*** Update File: a/b.go\r\n*** Move to: a/c.go\r\n@@ func x\r\n-old\r\n+new\r\n*** Delete File: gone.txt\r\n*** End Patch",
		[]PatchFile{{Op: PatchUpdate, Path: "a/b.go", MoveTo: "a/c.go"}, {Op: PatchDelete, Path: "gone.txt"}},
		"*** Begin Patch\n*** Update File: a/b.go\n*** Move to: a/c.go\n*** Delete File: gone.txt\n*** End Patch\n")
	// A body line that looks like a header is not one: it starts with +.
	f("*** Begin Patch\n*** Add File: x\n+*** Delete File: y\n*** End Patch\n",
		[]PatchFile{{Op: PatchAdd, Path: "x"}},
		"*** Begin Patch\n*** Add File: x\n*** End Patch\n")
	f("", nil, "")
	f("not a patch", nil, "")
}
