package codex

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	"github.com/hookwatch/hookwatch/internal/regfile"
)

// Rollout files: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl,
// one JSON record a line: {"timestamp","ordinal","type","payload"}.
const (
	rolloutPrefix = "rollout-"
	rolloutExt    = ".jsonl"
)

// IsRollout reports whether path names a rollout file.
func IsRollout(path string) bool {
	b := filepath.Base(path)
	return strings.HasPrefix(b, rolloutPrefix) && strings.HasSuffix(b, rolloutExt)
}

// tails are the windows ExitCode reads from the end of a rollout, one
// after the other until the record is found: the record was written just
// before the hook ran, so it is nearly always in the first, and a command's
// record holds at most Codex's cut of its output, far below the last.
var tails = [...]int64{64 << 10, 1 << 20}

// ExitCode returns the exit code the rollout at path records for the
// command of tool call callID (exec_command's item_completed record, whose
// item.id is the call id), which Codex's PostToolUse does not carry. It
// reads at most the file's last MiB; ok is false when the file is not a
// rollout or holds no such record there.
func ExitCode(path, callID string) (code int, ok bool) {
	if callID == "" || !IsRollout(path) {
		return 0, false
	}
	// The path is the payload's: a FIFO named like a rollout must not
	// hold the hook (regfile refuses it without blocking).
	f, st, err := regfile.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	needle, _ := json.Marshal(callID)
	for _, tail := range tails {
		off := max(st.Size()-tail, 0)
		buf := make([]byte, st.Size()-off)
		n, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return 0, false
		}
		if code, ok := findExitCode(buf[:n], needle, callID); ok || off == 0 {
			return code, ok
		}
	}
	return 0, false
}

// heads are the windows ForkParent reads from the start of a rollout, one
// after the other until its first line ends: that line is the
// session_meta record, ~22 KB with Codex 0.169's base instructions.
var heads = [...]int64{64 << 10, 1 << 20}

// ForkParent returns the session the rollout at path was forked from
// (thread/fork, codex fork), as its session_meta record says
// (forked_from_id), when the rollout is thread sessionID's own: the hook
// reads it on a fork's SessionStart, whose payload names neither. It is ""
// when the rollout is not a fork's or not sessionID's, or its first line
// is not a session_meta record within the file's first MiB.
func ForkParent(path, sessionID string) string {
	if sessionID == "" || !IsRollout(path) || !strings.HasSuffix(filepath.Base(path), "-"+sessionID+rolloutExt) {
		return ""
	}
	// The path is the payload's: regfile refuses a FIFO without blocking.
	f, _, err := regfile.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var line []byte
	for _, head := range heads {
		buf := make([]byte, head)
		n, err := f.ReadAt(buf, 0)
		if err != nil && err != io.EOF {
			return ""
		}
		var found bool
		if line, _, found = bytes.Cut(buf[:n], []byte("\n")); found || int64(n) < head {
			break
		}
		line = nil
	}
	rec, ok := DecodeRecord(line)
	if !ok || rec.Type != RecordSessionMeta {
		return ""
	}
	m, ok := DecodeMeta(rec.Payload)
	if !ok || m.ID != sessionID || m.ForkedFrom == sessionID {
		return ""
	}
	return m.ForkedFrom
}

// findExitCode looks for the call's record in buf, the latest line first;
// a line cut by the read's start fails to decode and is skipped. Only a
// line naming the call and an exit code is decoded.
func findExitCode(buf, needle []byte, callID string) (int, bool) {
	for len(buf) > 0 {
		i := bytes.LastIndexByte(buf[:len(buf)-1], '\n')
		line := buf[i+1:]
		buf = buf[:max(i, 0)]
		if !bytes.Contains(line, needle) || !bytes.Contains(line, []byte(`"exit_code"`)) {
			continue
		}
		if id, code, ok := CommandEnd(line); ok && id == callID {
			return code, true
		}
	}
	return 0, false
}

// CommandEnd reads a rollout record as the end of a command Codex ran:
// {"type":"event_msg","payload":{"type":"item_completed","item":{"id":
// call id,"exit_code": n}}}, written before the call's output record. ok is
// false for any other line. It is the one reading of a command's exit code,
// for the hook (ExitCode) and for the rollout's reader.
func CommandEnd(line []byte) (callID string, exitCode int, ok bool) {
	var r struct {
		Type    string `json:"type"`
		Payload struct {
			Type string `json:"type"`
			Item struct {
				ID       string `json:"id"`
				ExitCode *int   `json:"exit_code"`
			} `json:"item"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &r) != nil || r.Type != "event_msg" || r.Payload.Type != "item_completed" || r.Payload.Item.ExitCode == nil {
		return "", 0, false
	}
	return r.Payload.Item.ID, *r.Payload.Item.ExitCode, true
}
