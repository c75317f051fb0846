package claudecode

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// A transcript's records are read member by member with jsonscan rather than
// with encoding/json's reflection: most of a transcript's bytes are tool
// output that hookwatch cuts to a preview, and skipping a long string costs
// a fraction of decoding it. The result is what json.Unmarshal into
// TranscriptRecord gives (TestDecodeRecordMatchesEncodingJSON, fuzzed):
// keys matched as encoding/json matches them (exactly, else ignoring case),
// a later duplicate winning, null leaving a field as it is, and a value of
// the wrong type failing the whole record.

// The members of a record, a message and a block, as their json tags name
// them; a field's index in these lists is its number in decodeField.
var (
	recordFields = []string{"type", "subtype", "uuid", "sessionId", "agentId", "promptId", "timestamp", "cwd",
		"version", "requestId", "isMeta", "isCompactSummary", "permissionMode", "toolUseResult", "message",
		"isApiErrorMessage", "error"}
	messageFields = []string{"id", "role", "model", "stop_reason", "usage", "content"}
	blockFields   = []string{"type", "text", "id", "name", "input", "tool_use_id", "is_error", "content"}
)

// decodeObject calls field with each member of the JSON object data whose
// key is one of fields (by index), and reports whether data is a valid
// object (or null) all of whose known members field accepted.
func decodeObject(data []byte, fields []string, field func(i int, val []byte) bool) bool {
	if t := bytes.TrimSpace(data); string(t) == "null" {
		return true
	}
	ok := true
	_, valid := jsonscan.Members(data, func(key, val []byte) {
		if !ok {
			return
		}
		if i := fieldIndex(jsonscan.Name(key), fields); i >= 0 {
			ok = field(i, val)
		}
	})
	return valid && ok
}

// fieldIndex returns the index of the field name matches as encoding/json
// matches a key to a field: exactly, else by bytes.EqualFold; -1 for none.
func fieldIndex(name []byte, fields []string) int {
	for i, f := range fields {
		if string(name) == f {
			return i
		}
	}
	for i, f := range fields {
		// EqualFold folds some non-ASCII letters to ASCII ones (the
		// Kelvin sign to k): a key of other lengths can match.
		if (len(name) == len(f) || !isASCII(name)) && bytes.EqualFold(name, []byte(f)) {
			return i
		}
	}
	return -1
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// setString decodes a JSON string into *s; null leaves it.
func setString(val []byte, s *string) bool {
	if string(val) == "null" {
		return true
	}
	v, ok := jsonscan.Unquote(val)
	if ok {
		*s = v
	}
	return ok
}

// setBool decodes a JSON boolean into *b; null leaves it.
func setBool(val []byte, b *bool) bool {
	switch string(val) {
	case "true":
		*b = true
	case "false":
		*b = false
	case "null":
	default:
		return false
	}
	return true
}

// setRaw keeps a copy of the value as written, as json.RawMessage does (the
// line it is cut from is the reader's buffer).
func setRaw(val []byte, raw *json.RawMessage) bool {
	*raw = append((*raw)[:0], val...)
	return true
}

func (r *TranscriptRecord) decodeField(i int, val []byte) bool {
	switch recordFields[i] {
	case "type":
		return setString(val, &r.Type)
	case "subtype":
		return setString(val, &r.Subtype)
	case "uuid":
		return setString(val, &r.UUID)
	case "sessionId":
		return setString(val, &r.SessionID)
	case "agentId":
		return setString(val, &r.AgentID)
	case "promptId":
		return setString(val, &r.PromptID)
	case "timestamp":
		return setString(val, &r.Timestamp)
	case "cwd":
		return setString(val, &r.CWD)
	case "version":
		return setString(val, &r.Version)
	case "requestId":
		return setString(val, &r.RequestID)
	case "isMeta":
		return setBool(val, &r.IsMeta)
	case "isCompactSummary":
		return setBool(val, &r.IsCompactSummary)
	case "permissionMode":
		return setString(val, &r.PermissionMode)
	case "toolUseResult":
		return setRaw(val, &r.ToolUseResult)
	case "isApiErrorMessage":
		return setBool(val, &r.IsAPIErrorMessage)
	case "error":
		return setRaw(val, &r.Error)
	case "message":
		m := &r.Message
		return decodeObject(val, messageFields, func(i int, val []byte) bool {
			switch messageFields[i] {
			case "id":
				return setString(val, &m.ID)
			case "role":
				return setString(val, &m.Role)
			case "model":
				return setString(val, &m.Model)
			case "stop_reason":
				return setString(val, &m.StopReason)
			case "usage":
				// Small, and its numbers must decode as encoding/json
				// decodes them.
				return json.Unmarshal(val, &m.Usage) == nil
			case "content":
				return setRaw(val, &m.Content)
			}
			return true
		})
	}
	return true
}

func (b *TranscriptBlock) decodeField(i int, val []byte) bool {
	switch blockFields[i] {
	case "type":
		return setString(val, &b.Type)
	case "text":
		return setString(val, &b.Text)
	case "id":
		return setString(val, &b.ID)
	case "name":
		return setString(val, &b.Name)
	case "input":
		return setRaw(val, &b.Input)
	case "tool_use_id":
		return setString(val, &b.ToolUseID)
	case "is_error":
		return setBool(val, &b.IsError)
	case "content":
		return setRaw(val, &b.Content)
	}
	return true
}
