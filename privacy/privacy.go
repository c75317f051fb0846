// Package privacy applies hookwatch's edge rules to one decoded hook payload
// before it leaves the hook (to the spool or the network), and again in the
// collector, which may be stricter: keep what the agent did (prompts, tool
// inputs: redacted), not what it read (tool output is dropped or previewed
// unless the user opts in to full capture).
//
// It runs inside "hookwatch hook" on every event, so, like package redact, it
// does no work at init, and in the default preview mode it redacts only the
// text around the cuts, whatever the size of a tool's output (finding where
// the tail starts is one bytes.IndexByte pass over the output's strings).
package privacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"github.com/hookwatch/hookwatch/redact"
)

// Capture says how much of a tool's output (tool_response) is kept.
type Capture string

// The capture modes.
const (
	// CaptureNone keeps only the byte length of the output.
	CaptureNone Capture = "none"
	// CapturePreview keeps the length and the first and last bytes of the
	// output's JSON text, redacted. It is the default.
	CapturePreview Capture = "preview"
	// CaptureFull keeps the whole output (redacted when Options.Redact).
	CaptureFull Capture = "full"

	// CapturePatch marks an apply_patch tool_input reduced to its header
	// lines (see Apply): not a mode of Options, the mark of what the
	// preview and none modes keep of a patch.
	CapturePatch Capture = "patch"
)

// Environment variables read by OptionsFromEnv.
const (
	EnvCapture = "HOOKWATCH_CAPTURE" // none | preview | full
	EnvRedact  = "HOOKWATCH_REDACT"  // 0/false/off/no disables redaction
)

// DefaultPreviewBytes is the default Options.PreviewBytes: 512 bytes of head
// and 256 bytes of tail.
const DefaultPreviewBytes = 768

// captureKey marks a tool_response that Apply already replaced.
const captureKey = "hookwatch_capture"

// ParseCapture parses a capture mode, ignoring case and surrounding blanks.
// The empty string means CapturePreview.
func ParseCapture(s string) (Capture, error) {
	switch c := Capture(strings.ToLower(strings.TrimSpace(s))); c {
	case "":
		return CapturePreview, nil
	case CaptureNone, CapturePreview, CaptureFull:
		return c, nil
	}
	return "", fmt.Errorf("cannot parse capture mode %q: want none, preview or full", s)
}

// Options are the privacy settings of a hook or a collector.
//
// The zero value is not the default: it redacts nothing (Redact is false);
// use DefaultOptions or OptionsFromEnv.
type Options struct {
	// Capture is how much of tool output to keep; "" means CapturePreview
	// and an unknown value means CaptureNone (the safe reading).
	Capture Capture
	// PreviewBytes is the budget of a preview: two thirds for the head, one
	// third for the tail. Zero or less means DefaultPreviewBytes.
	PreviewBytes int
	// Redact replaces secrets in everything kept (see package redact).
	Redact bool
}

// DefaultOptions returns the defaults: preview capture of
// DefaultPreviewBytes, redaction on.
func DefaultOptions() Options {
	return Options{Capture: CapturePreview, PreviewBytes: DefaultPreviewBytes, Redact: true}
}

// OptionsFromEnv reads HOOKWATCH_CAPTURE (none, preview or full; default
// preview) and HOOKWATCH_REDACT (0, false, off or no disable redaction;
// default on) through getenv, typically os.Getenv.
//
// On a malformed value it returns an error naming the variable and the
// allowed values together with Options that are still safe to use: an
// unknown capture mode reads as none, an unknown redaction switch as on, as
// a misspelt setting must not leak more than the user asked for.
func OptionsFromEnv(getenv func(string) string) (Options, error) {
	o := DefaultOptions()
	var errs []error
	c, err := ParseCapture(getenv(EnvCapture))
	if err != nil {
		c = CaptureNone
		errs = append(errs, fmt.Errorf("%s: %w", EnvCapture, err))
	}
	o.Capture = c
	switch v := getenv(EnvRedact); strings.ToLower(strings.TrimSpace(v)) {
	case "", "1", "true", "on", "yes":
	case "0", "false", "off", "no":
		o.Redact = false
	default:
		errs = append(errs, fmt.Errorf("%s: cannot parse %q: want 1, true, on (the default) or 0, false, off", EnvRedact, v))
	}
	return o, errors.Join(errs...)
}

// split returns the head and tail budgets of a preview.
func (o Options) split() (head, tail int) {
	n := o.PreviewBytes
	if n <= 0 {
		n = DefaultPreviewBytes
	}
	head = (n*2 + 2) / 3
	return head, n - head
}

// capture returns the effective capture mode.
func (o Options) capture() Capture {
	switch o.Capture {
	case "":
		return CapturePreview
	case CaptureNone, CapturePreview, CaptureFull:
		return o.Capture
	}
	return CaptureNone
}

// Apply applies o to the top-level members of the hook payload p, in place,
// and reports whether it changed anything:
//
//   - tool_response (PostToolUse and others) and tool_calls[].tool_response
//     (PostToolBatch) are captured as o.Capture says: kept whole (redacted
//     when o.Redact), replaced by {"hookwatch_capture":"preview","bytes":N,
//     "head":"…","tail":"…"} where N is the byte length of the original JSON
//     text and head and tail are the first and last bytes of that text, its
//     strings redacted (redact.JSONRange), cut on UTF-8 boundaries (tail
//     omitted when the text fits in the head), or replaced
//     by {"hookwatch_capture":"none","bytes":N}. A value that is already such
//     an object is left alone, except that a preview is reduced to none when
//     o asks for none and redacted when o.Redact.
//   - the tool_input of Codex's apply_patch, {"command": "<patch>"}, is
//     reduced to the patch's header lines (the files it touches, see
//     event.PatchHeaders) and marked {…,"hookwatch_capture":"patch",
//     "bytes":N}, N the length of the patch, unless o.Capture is full: a
//     diff is what the agent wrote into files, as much content as a tool's
//     output. Policies saw the whole patch before this.
//   - when o.Redact, every other member is redacted with redact.JSON
//     (prompt, tool_input, tool_calls[].tool_input, command_args,
//     last_assistant_message, error, compact_summary, custom_instructions,
//     message, delta, reason, background_tasks, session_crons, content, …)
//     except those that carry ids, paths, names and enums, which stay
//     byte for byte (session_id, transcript_path, cwd, tool_use_id, …).
//     The key of a member is redacted too: a secret used as a key is
//     replaced by its marker.
//
// Apply is idempotent, never fails and never panics: a value of an unexpected
// type or invalid JSON is left as is, or only redacted.
func Apply(p map[string]json.RawMessage, o Options) (changed bool) {
	var renamed []string // keys that hold a secret themselves
	// Looked up once: no rule changes tool_name, which is kept (keep).
	toolName := p["tool_name"]
	for k, v := range p {
		if o.Redact && !keep(k) {
			if _, n := redact.String(k); n > 0 {
				renamed = append(renamed, k)
			}
		}
		if nv, ch := Member(k, v, toolName, o); ch {
			p[k] = nv
			changed = true
		}
	}
	slices.Sort(renamed) // the same payload gives the same keys
	for _, k := range renamed {
		rk, _ := redact.String(k)
		// Two secrets can redact to the same key: number the later ones
		// rather than lose a member.
		for i := 2; ; i++ {
			if _, taken := p[rk]; !taken {
				break
			}
			rk, _ = redact.String(k)
			rk += "#" + strconv.Itoa(i)
		}
		p[rk] = p[k]
		delete(p, k)
		changed = true
	}
	return changed
}

// ApplyMembers is Apply for a payload given as its members (event.SplitMembers),
// each key once: it applies o to each value in place and reports whether it
// changed any, for a reader that then makes the map of the members as they
// are now (the collector's admission) rather than changing one. ok is false
// when a key holds a secret, which Apply renames in a map: the caller then
// applies Apply to the map of the members as they were, ms being partly
// applied.
func ApplyMembers(ms event.Members, o Options) (changed, ok bool) {
	var toolName json.RawMessage // as Apply: no rule changes tool_name
	for _, m := range ms {
		if m.Key == "tool_name" {
			toolName = m.Value
		}
	}
	for i, m := range ms {
		if o.Redact && !keep(m.Key) {
			if _, n := redact.String(m.Key); n > 0 {
				return false, false
			}
		}
		if nv, ch := Member(m.Key, m.Value, toolName, o); ch {
			ms[i].Value = nv
			changed = true
		}
	}
	return changed, true
}

// Member applies o to the value v of the top-level member named key of a
// hook payload whose tool_name member is toolName (its JSON text, nil when
// none), as Apply does, and reports whether it changed it. It is Apply for
// a producer that writes a payload member by member (an in-process agent's
// calls): the same rules, without a map of the payload. The key itself is
// not redacted (Apply does that).
func Member(key string, v, toolName json.RawMessage, o Options) (json.RawMessage, bool) {
	switch {
	case key == "tool_response":
		return captureValue(v, o)
	case key == "tool_input" && o.capture() != CaptureFull && isPatchTool(toolName):
		return patchInput(v, o)
	case key == "tool_calls":
		return toolCalls(v, o)
	case keep(key) || !o.Redact:
		return v, false
	}
	return redactRaw(v)
}

// keep reports whether a member carries an id, a path, a name, an enum, a
// number or a flag: it is stored byte for byte, as attribution and queries
// rely on it and none of them holds a secret.
func keep(k string) bool {
	switch k {
	case "session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode", "prompt_id",
		"agent_id", "agent_type", "agent_transcript_path", "tool_name", "tool_use_id", "turn_id", "model",
		"source", "trigger", "file_path", "old_cwd", "new_cwd", "directory", "worktree_path", "scratchpad_dir",
		"effort", "duration_ms", "stop_hook_active", "is_interrupt", "notification_type", "load_reason",
		"memory_type", "globs", "trigger_file_path", "parent_file_path", "mcp_server_name", "elicitation_id",
		"mode", "action", "message_id", "index", "final", "expansion_type", "command_name", "command_source",
		"task_id", "teammate_name", "team_name", "event", "name":
		return true
	}
	return false
}

// redactRaw redacts one JSON value.
func redactRaw(v json.RawMessage) (json.RawMessage, bool) {
	out, n := redact.JSON(v)
	return out, n > 0
}

// captureValue applies the capture mode to one tool_response.
func captureValue(raw json.RawMessage, o Options) (json.RawMessage, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return raw, false // nothing was read
	}
	if c, ok := parseCaptured(t, o); ok {
		switch {
		case c.mode == "preview" && o.capture() == CaptureNone:
			return noneObject(c.bytes), true
		case c.mode == "preview" && o.Redact:
			return redactRaw(raw)
		}
		return raw, false
	}
	switch o.capture() {
	case CaptureFull:
		if o.Redact {
			return redactRaw(raw)
		}
		return raw, false
	case CapturePreview:
		b, _, _, _ := preview(raw, o, false)
		return b, true
	}
	return noneObject(strconv.Itoa(len(raw))), true
}

// captured is an already captured tool_response.
type captured struct {
	mode  string // "none" or "preview"
	bytes string // the original length, as its JSON number
}

// maxCaptured bounds what parseCaptured decodes: a capture object is small,
// and a 64 MiB tool output must not be decoded to find out it is not one.
const maxCaptured = 1 << 20

// parseCaptured recognises a value Apply already captured. It is strict
// about the shape, as a tool's output is hostile input: an output that
// merely mentions hookwatch_capture, or a forged preview with a head longer
// than o allows, is captured like any other.
func parseCaptured(t []byte, o Options) (captured, bool) {
	if len(t) > maxCaptured || t[0] != '{' || !bytes.Contains(t, []byte(`"`+captureKey+`"`)) {
		return captured{}, false
	}
	if c, ok := parseCapturedAsMade(t, o); ok {
		return c, true
	}
	return parseCapturedJSON(t, o)
}

// parseCapturedAsMade recognises a capture object in the shape Apply makes
// it (members in its order, keys unescaped, bytes a plain integer) with one
// scan and no reflection: every tool_response a hook already captured comes
// back to the collector so. It says nothing of any other shape, which
// parseCapturedJSON reads; where it answers, it answers as parseCapturedJSON
// does (FuzzParseCaptured).
func parseCapturedAsMade(t []byte, o Options) (captured, bool) {
	var vals [4][]byte
	n := 0
	names := [...]string{`"` + captureKey + `"`, `"bytes"`, `"head"`, `"tail"`}
	_, ok := jsonscan.Members(t, func(key, val []byte) {
		if n >= 0 && n < len(names) && string(key) == names[n] {
			vals[n] = val
			n++
			return
		}
		n = -1
	})
	if !ok || n < 2 {
		return captured{}, false
	}
	num := vals[1]
	if len(num) == 0 || len(num) > 18 || (num[0] == '0' && len(num) > 1) {
		return captured{}, false
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return captured{}, false
		}
	}
	c := captured{bytes: string(num)}
	switch string(vals[0]) {
	case `"none"`:
		c.mode = "none"
		return c, n == 2
	case `"preview"`:
		c.mode = "preview"
	default:
		return captured{}, false
	}
	if n < 3 {
		return captured{}, false
	}
	hb, tb := o.split()
	if head, ok := jsonscan.Unquote(vals[2]); !ok || len(head) > hb+markerSlack {
		return captured{}, false
	}
	if n == 4 {
		if tail, ok := jsonscan.Unquote(vals[3]); !ok || len(tail) > tb+markerSlack {
			return captured{}, false
		}
	}
	return c, true
}

// parseCapturedJSON is parseCaptured of any shape, through encoding/json.
func parseCapturedJSON(t []byte, o Options) (captured, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(t, &m) != nil || repeatsKey(t) {
		// A repeated key is a forgery: the map keeps its last value, and
		// the earlier ones ("bytes":"<the whole output>","bytes":5) would
		// be kept as they are, neither cut nor redacted.
		return captured{}, false
	}
	var c captured
	if json.Unmarshal(m[captureKey], &c.mode) != nil {
		return captured{}, false
	}
	var n json.Number
	if json.Unmarshal(m["bytes"], &n) != nil {
		return captured{}, false
	}
	if _, err := strconv.ParseUint(string(n), 10, 63); err != nil {
		return captured{}, false
	}
	c.bytes = string(n)
	switch c.mode {
	case "none":
		return c, len(m) == 2
	case "preview":
		hb, tb := o.split()
		var head, tail string
		if json.Unmarshal(m["head"], &head) != nil || len(head) > hb+markerSlack {
			return captured{}, false
		}
		_, hasTail := m["tail"]
		if hasTail && (json.Unmarshal(m["tail"], &tail) != nil || len(tail) > tb+markerSlack) {
			return captured{}, false
		}
		want := 3
		if hasTail {
			want = 4
		}
		return c, len(m) == want
	}
	return captured{}, false
}

// markerSlack is how much a head or tail may exceed its budget: a cut never
// splits a "[REDACTED:kind]" marker but extends to its end.
const markerSlack = 64

func noneObject(n string) json.RawMessage {
	return json.RawMessage(`{"` + captureKey + `":"none","bytes":` + n + `}`)
}

// window is how much text around a cut is redacted along with the preview,
// so that a secret straddling the cut is recognised whole (a PEM RSA 4096
// private key is about 3.2 KiB) and not left half visible.
const window = 4 << 10

// ToolResponse is Member("tool_response", raw, nil, o) for a tool's output
// that was not captured before, which also returns, when it made a preview
// object, the head and tail that object holds (ok): what a reader decodes
// from it, without decoding it. ok is false for any other capture.
func ToolResponse(raw json.RawMessage, o Options) (v json.RawMessage, head, tail string, ok bool) {
	if t := bytes.TrimSpace(raw); o.capture() == CapturePreview && len(t) > 0 && string(t) != "null" {
		if _, captured := parseCaptured(t, o); !captured {
			return previewObject(raw, o)
		}
	}
	v, _ = captureValue(raw, o)
	return v, "", "", false
}

// previewObject builds the preview capture of raw and returns it, with the
// head and tail it holds when ok (ok is false when a redaction of the
// object itself changed them). Its redaction depends on the preview
// budget, not on len(raw).
func previewObject(raw json.RawMessage, o Options) (b json.RawMessage, head, tail string, ok bool) {
	return preview(raw, o, true)
}

// preview is previewObject; head and tail are strings of their own when
// own says so, else views of raw or of its redaction, valid only until raw
// changes: for a caller that keeps only the object (captureValue), which
// holds copies of them.
func preview(raw json.RawMessage, o Options, own bool) (b json.RawMessage, head, tail string, ok bool) {
	hb, tb := o.split()
	// The text is redacted on its decoded strings, as it was sent, before
	// it is cut: in the JSON text a secret on the second line of a
	// command's output follows the "n" of "\n" and no word boundary.
	red := func(from, to int) string {
		r := raw[from:to]
		if o.Redact {
			r, _ = redact.JSONRange(raw, from, to)
		}
		if !utf8.Valid(r) {
			// Cut as it is read back: a byte of invalid UTF-8 is
			// written as U+FFFD (jsonstr.AppendQuoted), three bytes, and
			// a head or tail grown past its budget would not be
			// recognised as a preview (parseCaptured): a second Apply
			// would preview the preview.
			return jsonstr.Decoded(r)
		}
		if own || len(r) == 0 {
			return string(r)
		}
		return unsafe.String(&r[0], len(r))
	}
	if len(raw) <= hb+tb+2*window {
		r := red(0, len(raw))
		head = cutHead(r, hb)
		if len(head) < len(r) {
			tail = cutTail(r, tb, len(head))
		}
	} else {
		head = cutHead(red(0, hb+window), hb)
		// Redaction shortens the text (a long default, a private key
		// become a marker), and the tail cut from a shortened range may
		// start within what was read without the text before the range
		// (the rest of a URL's password whose expansion started before
		// it): the range grows, twice as long each time, until a window
		// of it is left before the tail, or it starts at the text's.
		from := len(raw) - tb - window
		r := red(from, len(raw))
		for from > 0 && len(r) < tb+window {
			from = max(0, len(raw)-2*(len(raw)-from))
			r = red(from, len(raw))
		}
		tail = cutTail(r, tb, 0)
	}
	b = make([]byte, 0, len(head)+len(tail)+96)
	b = append(b, `{"`+captureKey+`":"preview","bytes":`...)
	b = strconv.AppendInt(b, int64(len(raw)), 10)
	b = append(b, `,"head":`...)
	hs := len(b)
	b = jsonstr.AppendQuoted(b, head)
	he, ts, te := len(b), len(b), len(b)
	if tail != "" {
		b = append(b, `,"tail":`...)
		ts = len(b)
		b = jsonstr.AppendQuoted(b, tail)
		te = len(b)
	}
	b = append(b, '}')
	ok = true
	if o.Redact {
		// A cut can make a secret of what was none (a key pattern too
		// long to match, cut to the right length): redact the preview as
		// a later pass would (redact.JSON of the object, until it
		// changes nothing, four passes at most), so that a second Apply
		// changes nothing. Of the object's strings only head and tail
		// can change — the keys and "preview" are constants that hold no
		// secret — and neither "head" nor "tail" names a secret's kind,
		// so each is redacted as the JSON string it is alone: the same
		// bytes, without a pass over the rest (TestPreviewObjectRedaction).
		rh, nh := redactPasses(b[hs:he])
		rt, nt := redactPasses(b[ts:te])
		if nh+nt > 0 {
			r := make([]byte, 0, len(b)-(he-hs)-(te-ts)+len(rh)+len(rt))
			r = append(append(r, b[:hs]...), rh...)
			r = append(append(r, b[he:ts]...), rt...)
			b, ok = append(r, b[te:]...), false
		}
	}
	return b, head, tail, ok
}

// redactPasses redacts JSON text with redact.JSON until a pass changes
// nothing, four passes at most.
func redactPasses(v []byte) ([]byte, int) {
	total := 0
	for pass := 0; pass < 4; pass++ {
		r, n := redact.JSON(v)
		if n == 0 {
			break
		}
		v, total = r, total+n
	}
	return v, total
}

const marker = "[REDACTED:"

// cutHead returns the first n bytes of s, cut back to a UTF-8 boundary, or
// extended to the end of a redaction marker it would split.
func cutHead(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if i := strings.LastIndex(s[:min(len(s), n+len(marker)-1)], marker); i >= 0 && i < n {
		if j := strings.IndexByte(s[i:], ']'); j >= 0 && i+j >= n {
			n = i + j + 1
		}
	}
	return s[:n]
}

// cutTail returns the last n bytes of s that start at or after from, cut
// forward to a UTF-8 boundary, or moved back to the start of a redaction
// marker it would split.
func cutTail(s string, n, from int) string {
	start := max(len(s)-n, from)
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	if i := strings.LastIndex(s[:min(len(s), start+len(marker)-1)], marker); i >= from && i < start {
		if j := strings.IndexByte(s[i:], ']'); j >= 0 && i+j >= start {
			start = i
		}
	}
	return s[start:]
}

// toolCalls applies Apply's rules to each element of PostToolBatch's
// tool_calls: tool_response is captured, tool_input and any other member
// redacted, ids and names kept. Key order and the other members' bytes are
// kept.
func toolCalls(raw json.RawMessage, o Options) (json.RawMessage, bool) {
	var elems [][]byte
	if _, ok := jsonscan.Elements(raw, func(e []byte) { elems = append(elems, e) }); !ok {
		if o.Redact {
			return redactRaw(raw)
		}
		return raw, false
	}
	changed := false
	for i, e := range elems {
		var ne []byte
		var ch bool
		if e[0] == '{' {
			ne, ch = toolCall(e, o)
		} else if o.Redact {
			ne, ch = redactRaw(e)
		}
		if ch {
			elems[i], changed = ne, true
		}
	}
	if !changed {
		return raw, false
	}
	out := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	return append(out, ']'), true
}

// member is one member of a JSON object.
type member struct {
	key   []byte // the key as written, quotes included
	name  string // the key decoded
	value []byte
}

// toolCall applies the rules to one element of tool_calls. The members keep
// their order and the bytes of their keys.
func toolCall(obj []byte, o Options) ([]byte, bool) {
	var members []member
	_, ok := jsonscan.Members(obj, func(key, val []byte) {
		members = append(members, member{key: key, name: string(jsonscan.Name(key)), value: val})
	})
	if !ok {
		if o.Redact {
			return redactRaw(obj)
		}
		return obj, false
	}
	changed := false
	for i, m := range members {
		var nv []byte
		var ch bool
		switch {
		case m.name == "tool_response":
			nv, ch = captureValue(m.value, o)
		case keep(m.name) || !o.Redact:
			continue
		default:
			if rk, n := redact.String(m.name); n > 0 {
				members[i].key, changed = jsonstr.AppendQuoted(nil, rk), true
			}
			nv, ch = redactRaw(m.value)
		}
		if ch {
			members[i].value, changed = nv, true
		}
	}
	if !changed {
		return obj, false
	}
	out := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m.key...)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}'), true
}

// repeatsKey reports whether a key of the JSON object obj, a small one
// (a capture object, an apply_patch input), comes more than once, keys
// compared as decoded, as encoding/json compares them: a map of obj holds
// the last value of each, and a rule that judges obj by its map must not
// keep obj's bytes, which hold the earlier ones too. Invalid JSON repeats
// nothing.
func repeatsKey(obj []byte) bool {
	var buf [8]string
	keys := buf[:0]
	repeats := false
	jsonscan.Members(obj, func(key, _ []byte) {
		k := string(jsonscan.Name(key))
		repeats = repeats || slices.Contains(keys, k)
		keys = append(keys, k)
	})
	return repeats
}

// isPatchTool reports whether the tool_name member names Codex's apply_patch.
func isPatchTool(name json.RawMessage) bool {
	return string(name) == `"`+event.ApplyPatch+`"`
}

// patchInput reduces an apply_patch tool_input to the patch's headers. An
// input already reduced, or of another shape, is only redacted.
func patchInput(raw json.RawMessage, o Options) (json.RawMessage, bool) {
	var in map[string]json.RawMessage
	var patch string
	if json.Unmarshal(raw, &in) != nil || json.Unmarshal(in["command"], &patch) != nil {
		if o.Redact {
			return redactRaw(raw)
		}
		return raw, false
	}
	headers := event.PatchHeaders(patch)
	if headers == patch && string(in[captureKey]) == `"`+string(CapturePatch)+`"` && len(in) == 3 && !repeatsKey(raw) {
		// Reduced already (a hook's pipeline, then the collector's).
		if o.Redact {
			return redactRaw(raw)
		}
		return raw, false
	}
	if o.Redact {
		headers, _ = redact.String(headers)
	}
	b := []byte(`{"command":`)
	b = jsonstr.AppendQuoted(b, headers)
	b = append(b, `,"`+captureKey+`":"`+string(CapturePatch)+`","bytes":`...)
	b = strconv.AppendInt(b, int64(len(patch)), 10)
	return append(b, '}'), true
}
