package attribution

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/privacy"
)

// Project returns the project a payload's transcript_path and cwd belong
// to, exactly as Build groups events for lineage (Session.Project); see
// claudecode.Project. GroupKey adds the host and user: the sessions a
// Group keeps together.
func Project(transcriptPath, cwd string) string { return claudecode.Project(transcriptPath, cwd) }

// maxTitle is the length a title is cut to, in characters.
const maxTitle = 100

// Title makes the one-line title of a session from its first prompt, as
// the session model's Title has it: whitespace runs become one space, and
// a long prompt is cut at a word boundary near 100 characters and marked
// with "…". A listing that reads a session from the client's files alone
// titles it with the same.
func Title(prompt string) string {
	s := strings.Join(strings.FieldsFunc(prompt, unicode.IsSpace), " ")
	if utf8.RuneCountInString(s) <= maxTitle {
		return s
	}
	cut, n := 0, 0
	for i := range s {
		if n == maxTitle {
			cut = i
			break
		}
		n++
	}
	head := s[:cut]
	if sp := strings.LastIndexByte(head, ' '); sp >= len(head)*3/5 {
		head = head[:sp]
	}
	return strings.TrimRightFunc(head, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) + "…"
}

// agentIDKeys are the keys under which a delegation tool's response names
// the spawned agent: Claude Code's Agent/Task (agentId) and Codex's
// spawn_agent (agent_id).
var agentIDKeys = []string{"agentId", "agent_id"}

// spawnedAgentID reads the id of the agent a delegation call spawned from
// its PostToolUse tool_response: an object with agentId (Claude Code) or
// agent_id (Codex); a string holding such an object (Codex sends JSON text);
// or hookwatch's privacy preview {"hookwatch_capture":"preview",…}, read
// from an agentId member when the preview kept one, else by scanning its
// head and tail text for the key. nickname is the name Codex gives the
// agent on its screen (the object's nickname member, "Maxwell"), read only
// from a whole object: a preview's, unless it kept the whole text, may be
// cut.
func spawnedAgentID(resp json.RawMessage) (id, nickname string) {
	resp = bytes.TrimSpace(resp)
	if len(resp) == 0 {
		return "", ""
	}
	switch resp[0] {
	case '{':
		f, ok := agentFieldsOf(resp)
		if !ok {
			return "", ""
		}
		for _, id := range f.ids {
			if id != "" {
				return id, f.nickname
			}
		}
		if c, ok := privacy.ReadCapture(resp); ok {
			if c.Tail == "" && json.Valid([]byte(c.Head)) {
				// The text fitted in the head (no tail): it is the whole
				// response, as a short one (Codex's spawn_agent's) is.
				return spawnedAgentID(json.RawMessage(c.Head))
			}
			// head is the start of the JSON text, tail its end: either may
			// be cut inside the id.
			if id := scanAgentID(c.Head, true); id != "" {
				return id, ""
			}
			return scanAgentID(c.Tail, false), ""
		}
	case '"':
		s := jsonString(resp)
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") {
			if id, nickname := spawnedAgentID(json.RawMessage(t)); id != "" {
				return id, nickname
			}
		}
		return scanAgentID(s, false), ""
	}
	return "", ""
}

// agentFields are the members of a delegation call's response that name
// the spawned agent, each "" unless it is a string.
type agentFields struct {
	ids      [2]string // by agentIDKeys
	nickname string    // Codex's nickname
}

// agentFieldsOf reads the agentFields of a JSON object, and false when
// resp is not one.
func agentFieldsOf(resp json.RawMessage) (agentFields, bool) {
	var f agentFields
	_, ok := jsonscan.Members(resp, func(key, val []byte) {
		switch string(jsonscan.Name(key)) {
		case agentIDKeys[0]:
			f.ids[0] = jsonString(val)
		case agentIDKeys[1]:
			f.ids[1] = jsonString(val)
		case "nickname":
			f.nickname = jsonString(val)
		}
	})
	return f, ok
}

// jsonString returns raw as a string if it is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	s, _ := jsonscan.Unquote(raw)
	return s
}

// maxAgentID bounds an id read by scanAgentID; real ones are 7 to 36
// characters.
const maxAgentID = 128

// scanAgentID finds `agentId` or `agent_id` in text (a truncated JSON
// document, or "agentId: a1b2…" prose) and returns the id that follows it:
// quotes, backslashes, blanks, ':' and '=' are skipped, then the longest run
// of [A-Za-z0-9_-] is taken. When cut is set the text was truncated at its
// end, and an id that runs into the end may be incomplete: it is refused.
func scanAgentID(text string, cut bool) string {
	for _, key := range agentIDKeys {
		rest := text
		for {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			j := 0
			sep := false
			for j < len(rest) && strings.IndexByte("\"'\\ \t:=", rest[j]) >= 0 {
				if rest[j] == ':' || rest[j] == '=' {
					sep = true
				}
				j++
			}
			k := j
			for k < len(rest) && k-j < maxAgentID && isIDByte(rest[k]) {
				k++
			}
			if sep && k > j && (!cut || k < len(rest)) {
				return rest[j:k]
			}
		}
	}
	return ""
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// canonicalJSON re-encodes a JSON value with sorted keys and no spacing, so
// that inputs equal as values compare equal as strings. Invalid JSON is
// returned as is.
func canonicalJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// toolUseError reports whether a PostToolBatch tool_response (a string, an
// array of content blocks, or hookwatch's privacy preview of a string) is
// the client's <tool_use_error>, and returns its text without the tags.
func toolUseError(resp json.RawMessage) (string, bool) {
	text, ok := responseText(resp)
	if !ok {
		return "", false
	}
	return toolUseErrorText(text)
}

// responseText returns the text of a PostToolBatch tool_response: the
// string, the first content block's text, or the decoded head of a
// preview of a string.
func responseText(resp json.RawMessage) (string, bool) {
	resp = bytes.TrimSpace(resp)
	var text string
	switch {
	case len(resp) == 0:
		return "", false
	case resp[0] == '"':
		text = jsonString(resp)
	case resp[0] == '{':
		// The hook keeps tool output as a preview by default: its head is
		// the start of the JSON text, here a string literal that may be
		// cut anywhere, even inside an escape.
		c, ok := privacy.ReadCapture(resp)
		if !ok || c.Mode != privacy.CapturePreview || !strings.HasPrefix(c.Head, `"`) {
			return "", false
		}
		text = jsonscan.DecodeCut([]byte(c.Head))
	case resp[0] == '[':
		// An array of content blocks, each an object (or null) whose text
		// is a string (or null); the first block's text is the message.
		first := true
		valid := true
		_, ok := jsonscan.Elements(resp, func(e []byte) {
			if string(e) == "null" {
				first = false
				return
			}
			if e[0] != '{' {
				valid = false
				return
			}
			jsonscan.Members(e, func(key, val []byte) {
				if string(jsonscan.Name(key)) != "text" {
					return
				}
				if !isStringOrNull(val) {
					valid = false
				} else if first {
					text = jsonString(val)
				}
			})
			first = false
		})
		if !ok || !valid || first {
			return "", false
		}
	default:
		return "", false
	}
	return text, true
}

// toolUseErrorText returns the message of a <tool_use_error> text.
func toolUseErrorText(text string) (string, bool) {
	const open, closing = "<tool_use_error>", "</tool_use_error>"
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, open) {
		return "", false
	}
	t = strings.TrimPrefix(t, open)
	if i := strings.LastIndex(t, closing); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t), true
}

// deniedText reports whether text, what a call answered in place of its
// result (a PostToolBatch's tool_response, a PostToolUseFailure's error),
// is the client's word that the call was denied rather than run, and
// returns its message without a <tool_use_error> wrapper. The client
// denies a call by a permission rule or the user's no, in the message
// families it names itself ("Permission to use …", "Permission for this
// …", "Permission to edit …" and a path "denied by your permission
// settings"; "The user doesn't want to proceed with this tool use"), and
// reports a PreToolUse hook that blocked the call as "PreToolUse:<tool>
// hook error: <why>". A call that ran answers with its own result instead,
// and its PostToolUse or PostToolUseFailure comes first (finishCall).
func deniedText(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if m, ok := toolUseErrorText(t); ok {
		t = m
	}
	switch {
	case strings.HasPrefix(t, "Permission to use "), strings.HasPrefix(t, "Permission for this "), strings.HasPrefix(t, "Permission to edit "):
		return t, strings.Contains(t, " denied")
	case strings.HasPrefix(t, "File is in a directory that is denied by your permission settings"),
		strings.HasPrefix(t, "The user doesn't want to proceed with this tool use"):
		return t, true
	}
	if rest, ok := strings.CutPrefix(t, "PreToolUse:"); ok {
		tool, _, ok := strings.Cut(rest, " hook error: ")
		return t, ok && tool != "" && !strings.ContainsAny(tool, " \n")
	}
	return "", false
}

// isStringOrNull reports whether a member's raw value (nil when absent) is
// a JSON string, null or absent.
func isStringOrNull(raw json.RawMessage) bool {
	return len(raw) == 0 || raw[0] == '"' || string(raw) == "null"
}
