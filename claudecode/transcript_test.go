package claudecode_test

import (
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/claudecode"
)

func TestReadTranscript(t *testing.T) {
	f := func(in string, wantConsumed int64, wantTypes string, wantSkipped int) {
		t.Helper()
		var types []string
		n, st, err := claudecode.ReadTranscript(strings.NewReader(in), func(r *claudecode.TranscriptRecord) error {
			types = append(types, r.Type+":"+r.UUID)
			return nil
		})
		if err != nil {
			t.Fatalf("ReadTranscript(%q): %v", in, err)
		}
		if n != wantConsumed || strings.Join(types, ",") != wantTypes || st.Skipped != wantSkipped {
			t.Fatalf("ReadTranscript(%q) = %d, %q, skipped %d; want %d, %q, %d", in, n, types, st.Skipped, wantConsumed, wantTypes, wantSkipped)
		}
	}
	user := `{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}` + "\n"
	asst := `{"type":"assistant","uuid":"a1","message":{"id":"m","usage":{"input_tokens":3}}}` + "\n"
	f("", 0, "", 0)
	f(user, int64(len(user)), "user:u1", 0)
	// A torn last line is not consumed: the next read starts on it.
	f(user+asst[:20], int64(len(user)), "user:u1", 0)
	// Unknown record types, garbage and a type in a nested object only.
	f(`{"type":"queue-operation"}`+"\nnot json\n"+`{"type":"x","data":{"type":"user"}}`+"\n"+asst,
		int64(27+9+36+len(asst)), "assistant:a1", 3)
	// JSON written with spaces (a transcript a script rewrote) is read
	// as the client's compact JSON is.
	spaced := `{"type": "user", "uuid": "u3", "message": {"role": "user", "content": "hi"}}` + "\n"
	f(spaced+`{"type": "progress", "uuid": "p1"}`+"\n", int64(len(spaced)+35), "user:u3", 1)
	// A wrongly typed field skips the line, not the file.
	f(`{"type":"user","uuid":7}`+"\n"+user, int64(25+len(user)), "user:u1", 1)
	// A line longer than the reader's buffer is read whole.
	long := `{"type":"user","uuid":"u2","message":{"content":"` + strings.Repeat("x", 600<<10) + `"}}` + "\n"
	f(long+asst, int64(len(long)+len(asst)), "user:u2,assistant:a1", 0)
}

func TestParseTranscriptPath(t *testing.T) {
	f := func(path, wantSession, wantAgent, wantMain string, wantOK bool) {
		t.Helper()
		got, ok := claudecode.ParseTranscriptPath(path)
		if ok != wantOK || got.SessionID != wantSession || got.AgentID != wantAgent || got.MainPath != wantMain {
			t.Fatalf("ParseTranscriptPath(%q) = %+v, %v; want %q %q %q %v", path, got, ok, wantSession, wantAgent, wantMain, wantOK)
		}
	}
	f("/h/.claude/projects/-w/s1.jsonl", "s1", "", "/h/.claude/projects/-w/s1.jsonl", true)
	f("/h/.claude/projects/-w/s1/subagents/agent-a1.jsonl", "s1", "a1", "/h/.claude/projects/-w/s1.jsonl", true)
	f("/h/p/-w/s1/subagents/workflows/r1/agent-a2.jsonl", "s1", "a2", "/h/p/-w/s1.jsonl", true)
	f("/h/p/-w/s1/subagents/agent-a1.meta.json", "", "", "", false)
	f("/h/p/-w/s1/agent-a1.jsonl", "", "", "", false)
	f("/h/p/-w/notes.txt", "", "", "", false)
	f("/h/p/-w/s1/subagents/agent-.jsonl", "", "", "", false)
}

// TestReadTranscriptLost: the lines an import loses — above
// MaxTranscriptLine, not JSON, a record of the wrong shape — are counted
// apart from the record types it has no use for.
func TestReadTranscriptLost(t *testing.T) {
	user := `{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}` + "\n"
	huge := `{"type":"user","uuid":"u2","message":{"content":"` + strings.Repeat("x", claudecode.MaxTranscriptLine) + `"}}` + "\n"
	in := `{"type":"progress","data":{}}` + "\n" + // of no use: skipped, not lost
		`{"type":"user","message":{"role":"user","content":"torn` + "\n" + // a crash's torn line
		"not json\n" +
		`{"type":"assistant","uuid":7}` + "\n" +
		huge + user
	n := 0
	_, st, err := claudecode.ReadTranscript(strings.NewReader(in), func(*claudecode.TranscriptRecord) error { n++; return nil })
	if err != nil || n != 1 || st.Skipped != 5 || st.Long != 1 || st.Unreadable != 3 {
		t.Fatalf("ReadTranscript: %v, %d records, %+v; want 1 record, 5 skipped, 1 long, 3 unreadable", err, n, st)
	}
}
