package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/lines"
)

// TranscriptRecord is what hookwatch reads of one line of a Claude Code
// transcript (spec §3: an internal format that changes between client
// versions, so every field may be missing). Only user, assistant and
// system records are decoded; other types are passed over unread.
type TranscriptRecord struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	UUID      string `json:"uuid"`
	SessionID string `json:"sessionId"`
	AgentID   string `json:"agentId"`
	PromptID  string `json:"promptId"`
	Timestamp string `json:"timestamp"`
	CWD       string `json:"cwd"`
	Version   string `json:"version"`
	RequestID string `json:"requestId"`
	// IsMeta marks a user record the client wrote itself (a command's
	// output, a caveat), not the user's prompt.
	IsMeta bool `json:"isMeta"`
	// IsCompactSummary marks the summary a compaction put in place of
	// the conversation: a user record no user wrote.
	IsCompactSummary bool   `json:"isCompactSummary"`
	PermissionMode   string `json:"permissionMode"`
	// IsAPIErrorMessage marks an assistant record the client wrote for a
	// model request that failed (Synthetic, its text "API Error: …"), and
	// Error is then the kind of the failure (ErrorKind). Error is kept
	// raw: other records may carry an error of another shape.
	IsAPIErrorMessage bool            `json:"isApiErrorMessage"`
	Error             json.RawMessage `json:"error"`
	// ToolUseResult is, on a user record carrying a tool result, the
	// tool's structured result: what a PostToolUse hook gets as
	// tool_response.
	ToolUseResult json.RawMessage `json:"toolUseResult"`
	Message       struct {
		ID         string       `json:"id"`
		Role       string       `json:"role"`
		Model      string       `json:"model"`
		StopReason string       `json:"stop_reason"`
		Usage      *event.Usage `json:"usage"`
		// Content is a string (a prompt) or an array of blocks.
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// SyntheticModel is the model of the assistant records the client writes
// itself, which no model produced and no API request answered: an API
// error ("API Error: 400 …", a usage limit reached; the record carries
// isApiErrorMessage and the error), "No response requested." and the like.
// Such a record carries a usage of zeros; it is no response of a model.
const SyntheticModel = "<synthetic>"

// Synthetic reports whether r is an assistant record the client wrote
// itself rather than a model's response (SyntheticModel).
func (r *TranscriptRecord) Synthetic() bool {
	return r.Type == "assistant" && r.Message.Model == SyntheticModel
}

// APIError reports whether r is the record the client wrote for a model
// request that failed: Synthetic, and marked an API error message.
func (r *TranscriptRecord) APIError() bool { return r.Synthetic() && r.IsAPIErrorMessage }

// ErrorKind returns the kind of failure an API error record names (its
// error, as the StopFailure hook's names it: rate_limit,
// invalid_request, …, unknown); "" when its error is no string.
func (r *TranscriptRecord) ErrorKind() string {
	var s string
	if json.Unmarshal(r.Error, &s) != nil {
		return ""
	}
	return s
}

// TranscriptBlock is one block of a message's content array: a tool_use
// (ID, Name, Input) in an assistant record, a tool_result (ToolUseID,
// IsError, Content) or text in a user record.
type TranscriptBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// Time returns the record's timestamp, or the zero time when it has none
// that parses.
func (r *TranscriptRecord) Time() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, r.Timestamp)
	return t
}

// Blocks returns the record's content blocks; none when the content is a
// string or not an array, or when a block is not of the expected shape.
func (r *TranscriptRecord) Blocks() []TranscriptBlock {
	c := bytes.TrimSpace(r.Message.Content)
	if len(c) == 0 || c[0] != '[' {
		return nil
	}
	bs := []TranscriptBlock{} // not nil for [], as json.Unmarshal gives
	ok := true
	if _, valid := jsonscan.Elements(c, func(elem []byte) {
		if ok {
			bs = append(bs, TranscriptBlock{})
			ok = decodeObject(elem, blockFields, func(i int, val []byte) bool {
				return bs[len(bs)-1].decodeField(i, val)
			})
		}
	}); !valid || !ok {
		return nil
	}
	return bs
}

// Prompt returns the text of a user record whose content is a string (what
// the user typed), and false for any other record.
func (r *TranscriptRecord) Prompt() (string, bool) {
	c := bytes.TrimSpace(r.Message.Content)
	if r.Type != "user" || r.IsMeta || r.IsCompactSummary || len(c) == 0 || c[0] != '"' {
		return "", false
	}
	return jsonscan.Unquote(c)
}

// MaxTranscriptLine is the longest transcript line ReadTranscript decodes;
// a longer one (a huge tool result) is passed over and counted. It bounds
// the memory a hostile file can make the reader hold.
const MaxTranscriptLine = 32 << 20

// TranscriptStats counts what ReadTranscript read.
type TranscriptStats struct {
	// Records are the lines decoded and handed on.
	Records int
	// Skipped are complete lines passed over: another record type, a line
	// that is not JSON, a line above MaxTranscriptLine.
	Skipped int
	// Long are the skipped lines above MaxTranscriptLine, and Unreadable
	// those that are not JSON or not a record of the shape read (a torn
	// line a crash left, a field of another type): what is lost of the
	// transcript, which an import says, unlike the record types it has
	// no use for.
	Long, Unreadable int
}

// ReadTranscript reads the transcript r from its current position and
// calls fn with each user, assistant and system record, in file order.
// It returns how many bytes it consumed: up to the end of the last
// complete line, so that a line the client is still writing (or a torn
// last line) is read whole by the next call from that offset. Unknown
// record types and lines that are not JSON are skipped, never an error; an
// error is r's, or fn's, which stops the read.
func ReadTranscript(r io.Reader, fn func(rec *TranscriptRecord) error) (consumed int64, st TranscriptStats, err error) {
	lr := lines.NewReader(r, 256<<10, MaxTranscriptLine)
	for {
		line, f, rerr := lr.Next()
		switch {
		case rerr != nil:
			if errors.Is(rerr, io.EOF) {
				return lr.Offset(), st, nil
			}
			return lr.Offset(), st, rerr
		case f&lines.Unterminated != 0:
			// A torn or growing last line, left for the next read from
			// consumed.
			continue
		case f&lines.Long != 0:
			st.Skipped++
			st.Long++
			continue
		}
		rec, ok, bad := decodeRecord(line)
		if !ok {
			st.Skipped++
			if bad {
				st.Unreadable++
			}
			continue
		}
		st.Records++
		if err := fn(rec); err != nil {
			return lr.Offset(), st, err
		}
	}
}

// decodeRecord decodes a user, assistant or system line. The type is
// looked for in the raw bytes first: most of a transcript's bytes are
// attachments and progress records that hookwatch does not read. That
// shortcut holds for the compact JSON the client writes; a line written
// otherwise (spaces after the colons: a transcript rewritten by a script,
// say to scrub it, before it is imported) has no compact "type":" at all,
// and is decoded to learn its type. bad is true for a line not ok that
// is not JSON, or not of the record's shape: not a record of another type.
func decodeRecord(line []byte) (rec *TranscriptRecord, ok, bad bool) {
	if !bytes.Contains(line, []byte(`"type":"assistant"`)) && !bytes.Contains(line, []byte(`"type":"user"`)) &&
		!bytes.Contains(line, []byte(`"type":"system"`)) && bytes.Contains(line, []byte(`"type":"`)) {
		return nil, false, false
	}
	rec = new(TranscriptRecord)
	if !decodeObject(line, recordFields, rec.decodeField) {
		return nil, false, true
	}
	switch rec.Type {
	case "user", "assistant", "system":
		return rec, true, false
	}
	return nil, false, false
}

// TranscriptFile is a transcript file's place in the client's layout.
type TranscriptFile struct {
	Path string
	// SessionID is the session the file belongs to; AgentID is "" for the
	// main transcript, the subagent's id for a subagent's.
	SessionID, AgentID string
	// MainPath is the session's main transcript, the transcript_path every
	// hook event of the session carries, subagents' included.
	MainPath string
}

// ParseTranscriptPath places a transcript file in the client's layout:
// <dir>/<session>.jsonl is a main transcript, and
// <dir>/<session>/subagents/[…/]agent-<id>.jsonl one of its subagents'
// (workflows nest them deeper). ok is false for any other path.
func ParseTranscriptPath(path string) (f TranscriptFile, ok bool) {
	dir, base := filepath.Split(filepath.Clean(path))
	name, isJSONL := strings.CutSuffix(base, ".jsonl")
	if !isJSONL || !safeName(name) {
		return TranscriptFile{}, false
	}
	agent, isAgent := strings.CutPrefix(name, "agent-")
	if !isAgent {
		return TranscriptFile{Path: path, SessionID: name, MainPath: filepath.Clean(path)}, true
	}
	if agent == "" {
		return TranscriptFile{}, false
	}
	// Walk up to the "subagents" directory; its parent is <session>.
	d := filepath.Clean(dir)
	for range 8 {
		parent, elem := filepath.Dir(d), filepath.Base(d)
		if elem == "subagents" {
			sessDir := parent
			session := filepath.Base(sessDir)
			if !safeName(session) {
				return TranscriptFile{}, false
			}
			main := filepath.Join(filepath.Dir(sessDir), session+".jsonl")
			return TranscriptFile{Path: path, SessionID: session, AgentID: agent, MainPath: main}, true
		}
		if parent == d {
			break
		}
		d = parent
	}
	return TranscriptFile{}, false
}
