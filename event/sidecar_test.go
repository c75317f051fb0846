package event_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

// sidecarCases are sidecars as Claude Code writes them and as hostile
// input might.
var sidecarCases = []string{
	`{"agentType":"general-purpose","description":"Explore the repo","toolUseId":"toolu_01ABC","spawnDepth":1}`,
	`{"agentType":"Explore","toolUseId":"toolu_02","spawnDepth":2,"extra":{"a":[1,2]}}`,
	` {"toolUseId":"a","toolUseId":"b"} `, `{"toolUseId":null,"spawnDepth":null}`, `{"toolUseId":"\u00e9\ud83d\ude00\"x"}`,
	`{"spawnDepth":1.5,"toolUseId":"x"}`, `{"spawnDepth":1e2,"toolUseId":"x"}`, `{"spawnDepth":"1","toolUseId":"x"}`,
	`{"spawnDepth":-0,"toolUseId":"x"}`, `{"spawnDepth":99999999999999999999,"toolUseId":"x"}`, `{"toolUseId":1}`,
	`{"toolUseId":"x"} trailing`, `[]`, `null`, `{`, ``, `{"agentType":"x\xff"}`, `{"toolUseId":"a"`,
}

// TestDecodeSubagentMeta: the sidecar decodes as json.Unmarshal decodes
// it, or fails where it fails.
func TestDecodeSubagentMeta(t *testing.T) {
	for _, c := range sidecarCases {
		checkSidecar(t, []byte(c))
	}
}

func FuzzDecodeSubagentMeta(f *testing.F) {
	for _, c := range sidecarCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkSidecar)
}

// checkSidecar compares DecodeSubagentMeta with json.Unmarshal on data,
// except where encoding/json matches a key case-insensitively, which the
// client never relies on, or decodes a top-level null as an empty object.
func checkSidecar(t *testing.T, data []byte) {
	got, ok := event.DecodeSubagentMeta(data)
	var want event.SubagentMeta
	werr := json.Unmarshal(data, &want)
	if werr == nil && strings.TrimSpace(string(data)) == "null" {
		return
	}
	if !ok && werr == nil && foldedKey(data) {
		return
	}
	if ok != (werr == nil) || ok && got != want {
		if foldedKey(data) {
			return
		}
		t.Errorf("%q: got %+v, %v; json.Unmarshal %+v, %v", data, got, ok, want, werr)
	}
}

// foldedKey reports whether data holds a key that differs from one of
// SubagentMeta's only by case (as encoding/json folds it).
func foldedKey(data []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return true // a repeated key json.Unmarshal resolves its own way, or no object: cannot tell
	}
	for k := range m {
		for _, name := range []string{"agentType", "description", "toolUseId", "spawnDepth"} {
			if k != name && strings.EqualFold(k, name) {
				return true
			}
		}
	}
	return false
}
