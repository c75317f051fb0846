package claudecode

import (
	"bytes"
	"cmp"
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
	// parentHeadBytes is how much of each transcript of the directory is
	// searched for the fork's first message, the first message of its
	// whole family, so near the head of each member's (and read of the
	// fork's own, for that message and its copies).
	parentHeadBytes = 256 << 10
	// copiesBytes is how much of the fork's transcript is searched for the
	// first messages of its family's own, and how much of a member whose
	// copies run past its head is read for its own; maxDeepReads is how
	// many members are read that far, the most recently modified first.
	// Past either, in a family of long transcripts, a fork of a fork is
	// taken for a fork of the session its parent was copied from.
	copiesBytes  = 4 << 20
	maxDeepReads = 4
	// maxDirEntries and maxCandidates bound the directory read and the
	// files opened.
	maxDirEntries = 4096
	maxCandidates = 16
)

// ForkParent returns the session a forked session was copied from, proven
// from the transcripts: clients from 2.1.332 send SessionStart(source
// "fork") under the new id only, and no event names the parent. A fork's
// transcript (transcriptPath, of session sessionID) starts with copies of
// its parent's messages, same uuid and timestamp, sessionId rewritten
// (startsWithCopies); the parent's own may start with copies of its own
// parent's. So the fork's first message is the first message of its whole
// family — the session that wrote it, its forks, their forks — and every
// member's transcript of the same project directory holds it near its head
// (among the most recently modified ones, which are searched). Each member
// has its own messages after its copies, the first of which
// (ownFirstMessage) the fork copied only from that member or from one of
// its forks: the parent is the member whose own first message comes last
// among the fork's copies. An ancestor's come before it, and another fork
// of the same parent, or a later fork of the fork, is not among them at
// all. It returns "" when the transcript is not a fork's, or has no copied
// message yet, or no member of its family qualifies (the parent's
// transcript deleted).
func ForkParent(transcriptPath, sessionID string) string {
	return ReadFork(transcriptPath, sessionID).Parent
}

// Fork is what a forked session's transcript proves of its fork
// (ReadFork).
type Fork struct {
	// Parent is the session the fork was copied from (ForkParent).
	Parent string
	// Started is when the fork started: the time of the transcript's
	// first timestamped line, the client's own bookkeeping, written then
	// (the copies after it keep their parent's older times). Zero when
	// Parent is "".
	Started time.Time
}

// ReadFork returns the fork of the session whose transcript is
// transcriptPath, as ForkParent proves it, and when it started; the zero
// Fork when ForkParent finds no parent.
func ReadFork(transcriptPath, sessionID string) Fork {
	if !safeName(sessionID) || filepath.Base(transcriptPath) != sessionID+".jsonl" {
		return Fork{}
	}
	fork := readHead(transcriptPath, parentHeadBytes)
	uuid := firstMessageUUID(fork)
	if uuid == "" || !startsWithCopies(fork) {
		return Fork{}
	}
	dir := filepath.Dir(transcriptPath)
	// O_DIRECTORY: a FIFO swapped in for the directory fails to open
	// rather than blocking.
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Fork{}
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
	// Heads first, the rest up to copiesBytes only for a member whose
	// copies run past its head (a fork of a long transcript): a session
	// forked once reads no more than its parent's head.
	started := firstStamp(fork)
	parent, at, forkWhole, deep := "", -1, false, 0
	for _, c := range cands[:min(len(cands), maxCandidates)] {
		path := SessionTranscript(transcriptPath, c.id)
		head := readHead(path, parentHeadBytes)
		if !bytes.Contains(head, uuidKey(uuid)) {
			continue
		}
		own := ownFirstMessage(head)
		if own == "" && len(head) == parentHeadBytes && deep < maxDeepReads {
			own, deep = ownFirstMessage(readHead(path, copiesBytes)), deep+1
		}
		if own == "" {
			continue
		}
		i := bytes.Index(fork, uuidKey(own))
		if i < 0 && !forkWhole && len(fork) == parentHeadBytes {
			fork, forkWhole = readHead(transcriptPath, copiesBytes), true
			i = bytes.Index(fork, uuidKey(own))
		}
		if i > at {
			parent, at = c.id, i
		}
	}
	if parent == "" {
		return Fork{}
	}
	return Fork{Parent: parent, Started: started}
}

// firstStamp returns the time of the first timestamped line of a
// transcript's head, as eachMessage reads it: when a fork's transcript
// was started.
func firstStamp(head []byte) time.Time {
	var first time.Time
	eachStamp(head, func(s stamp) bool {
		first = s.at
		return first.IsZero()
	})
	return first
}

// uuidKey is how a transcript's line names its message uuid: what
// ForkParent looks for in other transcripts.
func uuidKey(uuid string) []byte {
	return []byte(`"uuid":"` + uuid + `"`)
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

// firstMessageUUID returns the uuid of the first complete line of a
// transcript's head that has one, or "" (also when that one does not look
// like a uuid, which could change the text searched for).
func firstMessageUUID(head []byte) string {
	uuid := ""
	eachStamp(head, func(s stamp) bool {
		uuid = s.uuid
		return uuid == ""
	})
	if !isUUID(uuid) {
		return ""
	}
	return uuid
}

// ownFirstMessage returns the uuid of the first message a transcript's
// head holds that is its session's own rather than a copy (eachMessage);
// "" when the head holds none, or it does not look like a uuid.
func ownFirstMessage(head []byte) string {
	uuid := ""
	eachMessage(head, func(id string, copied bool) bool {
		if !copied {
			uuid = id
		}
		return copied
	})
	if !isUUID(uuid) {
		return ""
	}
	return uuid
}

// eachMessage calls fn with the uuid of each timestamped line of a
// transcript's head that has one, in order, and whether it is a copy,
// until fn returns false. A fork's copies keep their original timestamps,
// so they are older than the file's first timestamped line (the client's
// own bookkeeping, written when the fork started); a session's own
// messages are not.
func eachMessage(head []byte, fn func(uuid string, copied bool) bool) {
	var first time.Time
	eachStamp(head, func(s stamp) bool {
		if s.at.IsZero() {
			return true
		}
		if first.IsZero() {
			first = s.at
		}
		return s.uuid == "" || fn(s.uuid, s.at.Before(first))
	})
}

// stamp is what fork detection reads of a transcript's line: its message
// uuid and its time, either of them empty.
type stamp struct {
	uuid string
	at   time.Time
}

// stampFields are the members of a line a stamp is read from.
var stampFields = []string{"uuid", "timestamp"}

// eachStamp calls fn with the stamp of each complete line of head, in
// order, until fn returns false. A line that is not a JSON object, or
// whose uuid or timestamp is not a string, has an empty stamp; a time
// that is not RFC 3339 is empty.
func eachStamp(head []byte, fn func(stamp) bool) {
	for len(head) > 0 {
		line, rest, ok := bytes.Cut(head, []byte{'\n'})
		if !ok {
			return // a cut line: its end is beyond the bound
		}
		head = rest
		var s stamp
		var ts string
		if decodeObject(line, stampFields, func(i int, val []byte) bool {
			if i == 0 {
				return setString(val, &s.uuid)
			}
			return setString(val, &ts)
		}) {
			s.at, _ = time.Parse(time.RFC3339Nano, ts)
		} else {
			s = stamp{}
		}
		if !fn(s) {
			return
		}
	}
}

// readHead returns up to n bytes from the start of the regular file at
// path; nothing, without blocking, for a FIFO or a device (regfile).
func readHead(path string, n int64) []byte {
	b, _ := regfile.ReadHead(path, n)
	return b
}

// startsWithCopies reports whether a transcript's head begins with
// messages copied from another session, as a fork's does (eachMessage). A
// session's own transcript starts with its own first message. The fork's
// first message alone cannot tell a fork from its parent, which holds it
// too; this can, from the file alone.
func startsWithCopies(head []byte) bool {
	copied := false
	eachMessage(head, func(_ string, c bool) bool {
		copied = c
		return false
	})
	return copied
}
