package attribution

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// modelSums are the sums of the models ModelVersion derives from the real
// captures (modelSum), one per version: what a collector of that version
// stored.
var modelSums = map[int]string{
	1: "aca4f3e9fd5973d537e019ef1ec8d7ab5148e2ac1c08f19afb7f3a5724ecda8f",
	2: "2e996f6b9e5751b1eb982799fce2670bf259fe7e63056dbac91e1906798236a7", // Counts.Subagents without the compaction agents
	// The client's permission denials are denied calls: none in the captures.
	3: "2e996f6b9e5751b1eb982799fce2670bf259fe7e63056dbac91e1906798236a7",
	4: "aeb5169405d6a5592abab226201012af4cdb0134193057b048888047a205f2f7", // Session.EndSources
	// Session.ForkSources; a subagent's prompt in SharedPrompts (no
	// Codex subagent's prompt in the captures).
	5: "9ca3ace79e4f00b02bcfd2532beac2b7b78c33b1b67fbbbcd5fafb8ba0df61ed",
	// A fork its file reported claims the orphan its client sent under
	// the parent's id: no fork read from a file in the captures.
	6: "9ca3ace79e4f00b02bcfd2532beac2b7b78c33b1b67fbbbcd5fafb8ba0df61ed",
	7: "7a6a9bb8ebce533d99fd1aa28d4c8a677c444514a1852557e4dcceb3c6e5c113", // Agent.Nickname
	// The runs a session's files record when no hook reported one: no
	// such session in the captures.
	8: "7a6a9bb8ebce533d99fd1aa28d4c8a677c444514a1852557e4dcceb3c6e5c113",
	// A subagent's nickname from its own rollout's events when the spawn
	// call's response names none: every capture's response names it.
	9:  "7a6a9bb8ebce533d99fd1aa28d4c8a677c444514a1852557e4dcceb3c6e5c113",
	10: "42e19ca5588ecd8b7914cefca9bb8098e874c75c8f5a0c1e46a8435bd6c5fbb3", // Agent.Model
	// A subagent's StopFailure stops it (Agent.StopError); a usage of
	// model <synthetic> is skipped. The sum takes in the API error runs
	// (claude-apierror-*), which the captures lacked before.
	// The sum of the same models in canonical form (modelSum): the sums
	// above are of the documents' bytes as encoded then.
	11: "1572c2afb6bd8f2945a85bff06e245585c4d6843416bca45f08bd53af69ddd4b",
}

// modelSum is the sha256 of the models Build derives from each of the real
// captures (corpora), in the order of their names: of their documents in
// canonical form (every object's keys sorted), so that the order an
// encoder writes a document's keys in, which changes nothing a reader
// reads, changes no sum.
func modelSum(t *testing.T) string {
	h := sha256.New()
	cs := corpora(t)
	for _, name := range slices.Sorted(maps.Keys(cs)) {
		h.Write([]byte(name))
		h.Write(canonicalDoc(t, mustJSON(t, Build(cs[name]))))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalDoc returns doc with every object's keys sorted, its numbers as
// written.
func canonicalDoc(t *testing.T, doc []byte) []byte {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return mustJSON(t, v)
}

// TestModelVersion: what Build derives from the real captures changes only
// with ModelVersion, so that a collector derives again the models stored
// before the change (store.SessionModel.Version) rather than serve them.
func TestModelVersion(t *testing.T) {
	got, want := modelSum(t), modelSums[ModelVersion]
	if got != want {
		t.Fatalf("the models of the real captures are not those of ModelVersion %d (sum %s, want %q): "+
			"if what Build derives changed, raise ModelVersion and record the sum in modelSums under it", ModelVersion, got, want)
	}
}
