package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"
)

// This file edits JSON text in place. gjson locates values (every Result
// carries its byte offset); insertions and removals are splices at those
// offsets, so bytes outside the edited span never change. An insertion puts
// its separator right after the previous sibling, and a removal of a non-first
// item takes out the span from the end of the previous sibling to its own end:
// the one undoes the other byte for byte.

// utf8BOM is stripped before parsing and put back on write: editors on
// Windows add it, and encoding/json rejects it.
var utf8BOM = []byte("\xEF\xBB\xBF")

// obj is a JSON object whose keys keep their order when rendered.
type obj []kv

// kv is one member of obj.
type kv struct {
	k string
	v any
}

// style is how a file is formatted; what hookwatch inserts imitates it.
type style struct {
	nl    string // line ending: "\n" or "\r\n"
	unit  string // one level of indentation, e.g. "  ", "    " or "\t"
	colon string // between a key and its value, e.g. ": " or ":"
	comma string // between items on one line, e.g. ", " or ","
	// oneLine is set when the whole document sits on one line: what is
	// inserted into it stays on one line too.
	oneLine bool
}

// defaultStyle is how Claude Code itself writes settings.json
// (JSON.stringify with two spaces).
var defaultStyle = style{nl: "\n", unit: "  ", colon: ": ", comma: ", "}

// item is one member of an object or element of an array, by byte offsets.
type item struct {
	key      string // object members only
	keyStart int    // offset of the key's opening quote; of the value for array elements
	keyEnd   int    // offset just past the key; equal to keyStart for array elements
	value    gjson.Result
}

func (it item) valStart() int { return it.value.Index }
func (it item) valEnd() int   { return it.value.Index + len(it.value.Raw) }

// parseRoot returns the top-level value of the valid document b. gjson's
// Parse leaves trailing whitespace in Raw; the edits need the exact span.
func parseRoot(b []byte) gjson.Result {
	r := gjson.ParseBytes(b)
	r.Raw = strings.TrimRight(r.Raw, " \t\r\n")
	return r
}

// items lists the members or elements of the container c.
func items(c gjson.Result) []item {
	var out []item
	c.ForEach(func(k, v gjson.Result) bool {
		it := item{value: v, keyStart: v.Index, keyEnd: v.Index}
		if k.Type == gjson.String {
			it.key, it.keyStart, it.keyEnd = k.Str, k.Index, k.Index+len(k.Raw)
		}
		out = append(out, it)
		return true
	})
	return out
}

// member returns the member key of the object c.
func member(c gjson.Result, key string) (item, bool) {
	for _, it := range items(c) {
		if it.key == key {
			return it, true
		}
	}
	return item{}, false
}

// syntaxError describes invalid JSON by line and column.
type syntaxError struct {
	line, col int
	msg       string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at line %d, column %d: %s", e.line, e.col, e.msg)
}

// validate reports whether b is one JSON object, with the position of the
// first problem otherwise.
func validate(b []byte) error {
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := int(se.Offset)
		if off >= len(b) && strings.HasPrefix(se.Error(), "unexpected end") {
			off = len(b) + 1 // point past the last byte, not at it
		}
		return position(b, off, se.Error())
	case errors.As(err, &te):
		return position(b, int(te.Offset), te.Error())
	case err != nil:
		return err
	}
	if _, ok := v.(map[string]any); !ok {
		i := len(b) - len(bytes.TrimLeft(b, " \t\r\n"))
		return position(b, i+1, "the top level is not an object")
	}
	return nil
}

// position converts a 1-based byte offset just past a problem (as
// encoding/json reports it) into a line and column.
func position(b []byte, off int, msg string) error {
	off = min(max(off-1, 0), len(b))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(b[:off], '\n')
	return &syntaxError{line: line, col: col, msg: msg}
}

// duplicateKey returns a key that occurs twice in the object c. JSON.parse
// keeps the last one and gjson finds the first: editing either would be a
// guess, so such files are refused.
func duplicateKey(c gjson.Result) (string, bool) {
	seen := map[string]bool{}
	for _, it := range items(c) {
		if seen[it.key] {
			return it.key, true
		}
		seen[it.key] = true
	}
	return "", false
}

// detectStyle reads the formatting of the document b (valid, no BOM).
func detectStyle(b []byte) style {
	st := defaultStyle
	if bytes.Contains(b, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	root := parseRoot(b)
	its := items(root)
	if len(its) == 0 {
		return st
	}
	if sep := string(b[its[0].keyEnd:its[0].valStart()]); !strings.ContainsAny(sep, "\r\n") {
		st.colon = sep
	}
	if st.colon == ":" {
		st.comma = ","
	}
	if len(its) > 1 {
		if sep := string(b[its[0].valEnd():its[1].keyStart]); !strings.ContainsAny(sep, "\r\n") {
			st.comma = sep
		}
	}
	body := b[root.Index : root.Index+len(root.Raw)]
	if !bytes.ContainsAny(body, "\r\n") {
		st.oneLine = true
		return st
	}
	// One level of indentation: the first line that starts with blanks
	// and has something else on it.
	for _, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		ws := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if len(ws) > 0 && len(ws) < len(line) {
			st.unit = string(ws)
			return st
		}
	}
	st.unit = ""
	return st
}

// lineIndent returns the blanks at the start of the line holding offset pos,
// and whether only blanks precede pos on that line.
func lineIndent(b []byte, pos int) (indent string, ownLine bool) {
	start := bytes.LastIndexByte(b[:pos], '\n') + 1
	pre := b[start:pos]
	ws := pre[:len(pre)-len(bytes.TrimLeft(pre, " \t"))]
	return string(ws), len(ws) == len(pre)
}

// quote renders s as a JSON string. Unlike json.Marshal it leaves <, > and &
// alone: shell commands in settings files are full of them.
func quote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

// render renders v in style st. multiLine puts each item on a line of its
// own, indented one unit deeper than indent, the indentation of the line
// where v starts.
func (st style) render(v any, indent string, multiLine bool) string {
	var b strings.Builder
	st.write(&b, v, indent, multiLine)
	return b.String()
}

func (st style) write(b *strings.Builder, v any, indent string, multiLine bool) {
	open := func(c byte, n int, each func(i int, indent string)) {
		b.WriteByte(c)
		inner := indent + st.unit
		for i := range n {
			if i > 0 {
				if multiLine {
					b.WriteByte(',')
				} else {
					b.WriteString(st.comma)
				}
			}
			if multiLine {
				b.WriteString(st.nl)
				b.WriteString(inner)
			}
			each(i, inner)
		}
		if multiLine && n > 0 {
			b.WriteString(st.nl)
			b.WriteString(indent)
		}
		b.WriteByte(c + 2) // '{'+2 == '}', '['+2 == ']'
	}
	switch v := v.(type) {
	case obj:
		open('{', len(v), func(i int, inner string) {
			b.WriteString(quote(v[i].k))
			b.WriteString(st.colon)
			st.write(b, v[i].v, inner, multiLine)
		})
	case []any:
		open('[', len(v), func(i int, inner string) { st.write(b, v[i], inner, multiLine) })
	case []string:
		open('[', len(v), func(i int, inner string) { b.WriteString(quote(v[i])) })
	case string:
		b.WriteString(quote(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	default:
		panic(fmt.Sprintf("install: cannot render %T", v)) // only hookwatch's own values get here
	}
}

// splice replaces b[start:end] with s.
func splice(b []byte, start, end int, s string) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(s))
	out = append(out, b[:start]...)
	out = append(out, s...)
	return append(out, b[end:]...)
}

// appendItem adds v at the end of the container c (an object when key is
// not nil, an array otherwise), formatted like its siblings.
func appendItem(b []byte, st style, c gjson.Result, key *string, v any) []byte {
	text := func(indent string, multiLine bool) string {
		s := st.render(v, indent, multiLine)
		if key != nil {
			s = quote(*key) + st.colon + s
		}
		return s
	}
	its := items(c)
	if n := len(its); n > 0 {
		last := its[n-1]
		indent, own := lineIndent(b, last.keyStart)
		if own && !st.oneLine {
			return splice(b, last.valEnd(), last.valEnd(), ","+st.nl+indent+text(indent, true))
		}
		sep := st.comma
		if n > 1 {
			if s := string(b[its[n-2].valEnd():last.keyStart]); !strings.ContainsAny(s, "\r\n") {
				sep = s
			}
		}
		return splice(b, last.valEnd(), last.valEnd(), sep+text(indent, false))
	}
	open, end := c.Index, c.Index+len(c.Raw)-1
	if st.oneLine {
		return splice(b, open+1, end, text("", false))
	}
	indent, _ := lineIndent(b, open)
	inner := indent + st.unit
	return splice(b, open+1, end, st.nl+inner+text(inner, true)+st.nl+indent)
}

// removeItem takes the i-th item out of the container c. It undoes
// appendItem exactly; the only item leaves "{}" or "[]".
func removeItem(b []byte, c gjson.Result, i int) []byte {
	its := items(c)
	switch {
	case len(its) == 1:
		return splice(b, c.Index+1, c.Index+len(c.Raw)-1, "")
	case i > 0:
		return splice(b, its[i-1].valEnd(), its[i].valEnd(), "")
	default:
		return splice(b, its[0].keyStart, its[1].keyStart, "")
	}
}

// replaceValue replaces the value of it by v, rendered at its place.
func replaceValue(b []byte, st style, it item, v any) []byte {
	indent, own := lineIndent(b, it.keyStart)
	multiLine := !st.oneLine && own
	return splice(b, it.valStart(), it.valEnd(), st.render(v, indent, multiLine))
}

// sameJSON reports whether a and b hold the same JSON value, regardless of
// formatting and key order.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// ugly returns b without insignificant whitespace, for comparing documents
// that differ only in formatting. A blank document counts as "{}": that is
// what Claude Code makes of it.
func ugly(b []byte) string {
	b = bytes.TrimPrefix(b, utf8BOM)
	if len(bytes.TrimSpace(b)) == 0 {
		return "{}"
	}
	return string(pretty.Ugly(b))
}
