package attribution_test

import (
	"testing"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/classify"
	"github.com/hookwatch/hookwatch/event"
)

// TestRecordedFiles: the latest recorded state of each file, most recently
// touched first; a failed write keeps the state before it, a successful
// write that recorded none (a shell command) leaves the file out, a read
// without a state keeps the earlier one, and limit keeps the most recent.
func TestRecordedFiles(t *testing.T) {
	st := func(p string, mtime int64) event.FileState { return event.FileState{Path: p, MtimeNS: mtime, Size: 1} }
	call := func(status string, read, written []string, states ...event.FileState) *attribution.ToolCall {
		return &attribution.ToolCall{Status: status, Meta: classify.Meta{FilesRead: read, FilesWritten: written}, CallDetail: &attribution.CallDetail{FileStates: states}}
	}
	calls := []*attribution.ToolCall{
		call(attribution.StatusOK, []string{"/a"}, nil, st("/a", 1)),
		call(attribution.StatusOK, []string{"/b"}, nil, st("/b", 1)),
		call(attribution.StatusOK, nil, []string{"/a"}, st("/a", 2)),         // Edit
		call(attribution.StatusError, nil, []string{"/a"}),                   // a failed Edit
		call(attribution.StatusOK, []string{"/c"}, nil, st("/c", 1)),         // Read
		call(attribution.StatusOK, nil, []string{"/c"}),                      // sed -i: state unknown
		call(attribution.StatusOK, []string{"/b"}, nil),                      // grep: no state
		call(attribution.StatusOK, []string{"/d"}, nil, st("/elsewhere", 1)), // a state of another file
	}
	got := attribution.RecordedFiles(calls, 0)
	want := []struct {
		path  string
		mtime int64
		wrote bool
	}{{"/b", 1, false}, {"/a", 2, true}}
	if len(got) != len(want) {
		t.Fatalf("RecordedFiles = %+v", got)
	}
	for i, w := range want {
		if g := got[i]; g.Path != w.path || g.MtimeNS != w.mtime || g.Wrote != w.wrote {
			t.Errorf("file %d: %+v, want %+v", i, g, w)
		}
	}
	if got := attribution.RecordedFiles(calls, 1); len(got) != 1 || got[0].Path != "/b" {
		t.Errorf("limit 1: %+v", got)
	}
}
