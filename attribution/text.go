package attribution

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/claudecode"
)

// Project returns the project a payload's transcript_path and cwd belong
// to, exactly as Build groups events for lineage (Session.Project); see
// claudecode.Project. A caller that keeps derived state per group of
// sessions (the collector) uses it to find the sessions Build must see
// together.
func Project(transcriptPath, cwd string) string { return claudecode.Project(transcriptPath, cwd) }

// projectOf is claudecode.Project.
func projectOf(transcriptPath, cwd string) string { return claudecode.Project(transcriptPath, cwd) }

// maxTitle is the length a title is cut to, in characters.
const maxTitle = 100

// title makes a one-line title of a prompt: whitespace runs become one
// space, and a long prompt is cut at a word boundary near maxTitle
// characters and marked with "…".
func title(prompt string) string {
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
// head and tail text for the key.
func spawnedAgentID(resp json.RawMessage) string {
	resp = bytes.TrimSpace(resp)
	if len(resp) == 0 {
		return ""
	}
	switch resp[0] {
	case '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal(resp, &obj) != nil {
			return ""
		}
		for _, k := range agentIDKeys {
			if id := jsonString(obj[k]); id != "" {
				return id
			}
		}
		if jsonString(obj["hookwatch_capture"]) != "" {
			// head is the start of the JSON text, tail its end: either may
			// be cut inside the id.
			if id := scanAgentID(jsonString(obj["head"]), true); id != "" {
				return id
			}
			return scanAgentID(jsonString(obj["tail"]), false)
		}
	case '"':
		s := jsonString(resp)
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") {
			if id := spawnedAgentID(json.RawMessage(t)); id != "" {
				return id
			}
		}
		return scanAgentID(s, false)
	}
	return ""
}

// jsonString returns raw as a string if it is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
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
		var obj struct {
			Capture string `json:"hookwatch_capture"`
			Head    string `json:"head"`
		}
		if json.Unmarshal(resp, &obj) != nil || obj.Capture != "preview" || !strings.HasPrefix(obj.Head, `"`) {
			return "", false
		}
		text = cutJSONString(obj.Head)
	case resp[0] == '[':
		var blocks []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(resp, &blocks) != nil || len(blocks) == 0 {
			return "", false
		}
		text = blocks[0].Text
	default:
		return "", false
	}
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

// cutJSONString decodes the start of a JSON string literal (quote
// included) that may be cut anywhere: what decodes of it, without the part
// of an escape sequence the cut left.
func cutJSONString(lit string) string {
	for drop := 0; drop <= 6 && drop < len(lit); drop++ {
		s := lit[:len(lit)-drop]
		if !strings.HasSuffix(s, `"`) || len(s) == 1 || strings.HasSuffix(s, `\"`) {
			s += `"`
		}
		var out string
		if json.Unmarshal([]byte(s), &out) == nil {
			return out
		}
	}
	return ""
}
