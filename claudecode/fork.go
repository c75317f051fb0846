package claudecode

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/internal/regfile"
)

// Bounds of ForkParent's reads: it runs in the hook, on the agent's path,
// and reads files an attacker with write access to the project directory
// may have shaped.
const (
	// forkHeadBytes is how much of the fork's transcript is read for its
	// first message; the copied messages start on its first lines.
	forkHeadBytes = 64 << 10
	// parentHeadBytes is how much of each candidate parent is searched for
	// that message: it is the parent's first message too, so near its head.
	parentHeadBytes = 256 << 10
	// maxDirEntries and maxCandidates bound the directory read and the
	// files opened.
	maxDirEntries = 4096
	maxCandidates = 16
)

// ForkParent returns the session a forked session was copied from, proven
// from the transcripts: clients from 2.1.332 send SessionStart(source
// "fork") under the new id only, and no event names the parent. The fork's
// transcript (transcriptPath, of session sessionID) starts with copies of
// the parent's messages, same uuid, sessionId rewritten; the parent is the
// other transcript of the same project directory that holds the first
// copied message, looked for among the most recently modified ones. It
// returns "" when the fork's transcript has no copied message yet, or no
// candidate holds it. When several do (the parent and earlier forks of it),
// the most recently modified wins.
func ForkParent(transcriptPath, sessionID string) string {
	if !safeName(sessionID) || filepath.Base(transcriptPath) != sessionID+".jsonl" {
		return ""
	}
	uuid := firstMessageUUID(transcriptPath)
	if uuid == "" {
		return ""
	}
	dir := filepath.Dir(transcriptPath)
	// O_DIRECTORY: a FIFO swapped in for the directory fails to open
	// rather than blocking.
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	entries, _ := d.ReadDir(maxDirEntries)
	d.Close()
	type candidate struct {
		id    string
		mtime int64
	}
	var cands []candidate
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || id == sessionID || !safeName(id) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		cands = append(cands, candidate{id, info.ModTime().UnixNano()})
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if a.mtime != b.mtime {
			return cmp.Compare(b.mtime, a.mtime)
		}
		return strings.Compare(a.id, b.id)
	})
	needle := []byte(`"uuid":"` + uuid + `"`)
	for _, c := range cands[:min(len(cands), maxCandidates)] {
		if head := readHead(SessionTranscript(transcriptPath, c.id), parentHeadBytes); bytes.Contains(head, needle) {
			return c.id
		}
	}
	return ""
}

// SessionTranscript is the main transcript of session id in the project
// directory of transcriptPath, another main transcript: a fork's parent
// (ForkParent) sits beside the fork.
func SessionTranscript(transcriptPath, id string) string {
	return filepath.Join(filepath.Dir(transcriptPath), id+".jsonl")
}

// isUUID reports whether s looks like a message uuid: hex digits and
// dashes, so that it cannot change the text searched for.
func isUUID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}

// firstMessageUUID returns the uuid of the first complete line of the
// transcript at path that has one and belongs to its session, or "".
func firstMessageUUID(path string) string {
	head := readHead(path, forkHeadBytes)
	for len(head) > 0 {
		line, rest, ok := bytes.Cut(head, []byte{'\n'})
		if !ok {
			return "" // a cut line: its end is beyond the bound
		}
		head = rest
		var m struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal(line, &m) == nil && m.UUID != "" {
			if !isUUID(m.UUID) {
				return ""
			}
			return m.UUID
		}
	}
	return ""
}

// readHead returns up to n bytes from the start of the regular file at
// path; nothing, without blocking, for a FIFO or a device (regfile).
func readHead(path string, n int64) []byte {
	b, _ := regfile.ReadHead(path, n)
	return b
}

// StartsWithCopies reports whether the transcript at path begins with
// messages copied from another session, as a fork's does: the copies keep
// their original timestamps, so the file's first timestamped line (the
// client's own bookkeeping, written when the fork started) is later than
// its first message. A session's own transcript starts no later than its
// first message. ForkParent alone cannot tell a fork from its parent, whose
// first message the fork holds too; this can, from the file alone.
func StartsWithCopies(path string) bool {
	head := readHead(path, forkHeadBytes)
	var first time.Time
	for len(head) > 0 {
		line, rest, ok := bytes.Cut(head, []byte{'\n'})
		if !ok {
			return false
		}
		head = rest
		var m struct {
			UUID      string `json:"uuid"`
			Timestamp string `json:"timestamp"`
		}
		if json.Unmarshal(line, &m) != nil || m.Timestamp == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m.Timestamp)
		if err != nil {
			continue
		}
		if first.IsZero() {
			first = at
		}
		if m.UUID != "" {
			return at.Before(first)
		}
	}
	return false
}
