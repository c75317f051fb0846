package redact

import (
	"bytes"
	"strings"
	"unsafe"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

// maxNest bounds how many times a string holding JSON text (a Codex tool's
// output, an MCP server's answer) is opened in turn.
const maxNest = 3

// JSON redacts the JSON text raw: every string, object keys included, is
// decoded, redacted as String does, and written back escaped when it
// changed; a string whose object key names a secret ("password", "api_key",
// "Authorization", …) is replaced whole, and a string that holds JSON text
// is redacted as JSON in turn. Numbers, structure, key order, whitespace and
// every byte outside a redacted string are kept.
//
// raw need not be valid: text cut from JSON, or not JSON at all, has its
// strings redacted the same way (a quote opens a string, the next
// unescaped quote closes it), so that a secret cannot pass by breaking the
// syntax around it. Valid JSON stays valid. It returns raw itself when
// nothing was redacted. It never panics, its cost is linear in len(raw),
// and it is idempotent.
func JSON(raw []byte) (out []byte, n int) {
	return redactRange(raw, 0, len(raw), 0)
}

// JSONRange returns the redacted text of raw[from:to], a piece of the JSON
// text raw, as JSON would redact it: the strings are found from the start
// of raw, so a piece that begins inside a string is read as one (from the
// first whole escape on). This is how a preview of a large tool output is
// redacted without redacting the whole output.
func JSONRange(raw []byte, from, to int) (out []byte, n int) {
	to = min(max(to, 0), len(raw))
	from = min(max(from, 0), to)
	return redactRange(raw, from, to, 0)
}

// redactRange redacts raw[from:to]; nest counts the strings of JSON text
// opened so far.
func redactRange(raw []byte, from, to, nest int) (out []byte, n int) {
	var buf, kbuf []byte // scratch for decoding escaped strings and keys
	last := from         // raw[last:to] has not been copied to out yet
	// Nothing after to matters: a string that runs past it reads as cut,
	// and its end is not searched for through the rest of a large text.
	it := jsonscan.NewStrings(raw[:to])
	for {
		s, ok := it.Next()
		if !ok || s.Start > to {
			break
		}
		if s.End <= from {
			continue
		}
		cs, ce := max(s.Start, from), min(s.End, to)
		if cs > s.Start {
			cs = s.Start + jsonscan.CleanStart(raw[s.Start:s.End], cs-s.Start)
			cs = openKeyStart(raw, s.Start, cs)
		}
		if cs >= ce {
			continue
		}
		content := raw[cs:ce]
		esc := bytes.IndexByte(content, '\\') >= 0
		text := bytesString(content)
		if esc {
			if cap(buf) < len(content) {
				// Decoding shortens a string but for invalid UTF-8 (one
				// byte becomes U+FFFD's three): size the scratch once.
				buf = make([]byte, 0, len(content))
			}
			buf = jsonscan.AppendDecoded(buf[:0], content)
			text = bytesString(buf)
		}
		var r string
		var m int
		switch {
		case s.Key:
			r, m = String(text)
		case s.KeyStart >= 0:
			key := raw[s.KeyStart:s.KeyEnd]
			if bytes.IndexByte(key, '\\') >= 0 {
				kbuf = jsonscan.AppendDecoded(kbuf[:0], key)
				key = kbuf
			}
			kind := nameKind(bytesString(key))
			if kind == "signature" {
				kind = "" // "signature": "func(x int)" in code-intelligence output
			}
			r, m = redactValue(text, kind, nest)
		default:
			r, m = redactValue(text, "", nest)
		}
		if m == 0 {
			continue
		}
		if out == nil {
			out = make([]byte, 0, to-from+32)
		}
		out = append(out, raw[last:max(last, cs)]...) // cs < last: openKeyStart
		if esc {
			out = jsonstr.AppendEscaped(out, r)
		} else {
			// Redaction only removes bytes and inserts ASCII markers, so
			// text that needed no escaping still needs none.
			out = append(out, r...)
		}
		last, n = ce, n+m
	}
	if n == 0 {
		return raw[from:to], 0
	}
	return append(out, raw[last:to]...), n
}

// openKeyStart returns where the piece of the string that starts at
// raw[start] is read from when the piece starts at raw[cs]: at the BEGIN
// line of a private key whose body the piece's start cuts (no END line
// between), for the body's rest to be redacted as the key's (its marker
// then stands for the key's part before cs too); else at cs. It looks
// back at most maxSpan bytes, as far as a key's body is redacted.
func openKeyStart(raw []byte, start, cs int) int {
	lb := max(start, cs-maxSpan)
	b := bytes.LastIndex(raw[lb:cs], []byte("-----BEGIN "))
	if b < 0 {
		return cs
	}
	b += lb
	text := raw[b:cs]
	if bytes.IndexByte(text, '\\') >= 0 {
		text = jsonscan.AppendDecoded(nil, text)
	}
	if pemOpen(bytesString(text)) {
		return b
	}
	return cs
}

// redactText redacts the decoded text of a string whose key names no
// secret. Text that looks like JSON (Codex sends tool output as JSON text
// in a string) has its own strings decoded and redacted first: inside it a
// secret after a newline reads `\nAKIA…`, which String alone cannot see.
func redactText(v string, nest int) (string, int) {
	if nest < maxNest && looksLikeJSON(v) {
		if r, n := redactRange(unsafe.Slice(unsafe.StringData(v), len(v)), 0, len(v), nest+1); n > 0 {
			out, m := String(string(r))
			return out, n + m
		}
	}
	return String(v)
}

// looksLikeJSON reports whether text starts, after blanks, with '{', '['
// or '"' (the preview of a string) and holds a string.
func looksLikeJSON(v string) bool {
	t := strings.TrimLeft(v, " \t\r\n")
	return t != "" && (t[0] == '{' || t[0] == '[' || t[0] == '"') && strings.IndexByte(t, '"') >= 0
}

// redactValue redacts a decoded string value whose key names kind ("" for
// none). The result never aliases v when n > 0.
func redactValue(v, kind string, nest int) (string, int) {
	if kind == "" {
		return redactText(v, nest)
	}
	t := strings.TrimSpace(v)
	if t == "" || skipString(t) {
		// "${PASS:-S3cret}" (an MCP server's env, expanded by the client):
		// the word is the value (defaultWord's, the braces read to the
		// end of the string, however long the word). Braces that do not
		// close ("${PASS:-S3cr", a string cut) leave the word to the
		// string's end: a value all the same, and read as one, so that
		// what it holds cannot close the braces once redacted and be
		// read otherwise the next time. Only ${ opens braces inside
		// (braceEnd): a lone { in a value ("${PASS:-S3{cr}et") leaves
		// the first } to close the expansion, before and after the
		// value is redacted.
		if ws, we, op, closed := paramWord(t, 0, len(t)); op != 0 && op != '?' && (!closed || we == len(t)-1) {
			if r, n := redactValue(t[ws:we], kind, nest); n > 0 {
				// The rest is read as text, as it is without a default.
				r, m := redactText(t[:ws]+r+t[we:], nest)
				return r, n + m
			}
		}
		if t != "" && expansionAt(t, 0) && textAfterExpansions(t, 0, len(t)) {
			// "${VAULT_PW}Xk93": one word, as on a command line.
			return markerPrefix + kind + "]", 1
		}
		return redactText(v, nest)
	}
	switch kind {
	case "authorization":
		// Keep the scheme: "Bearer [REDACTED:authorization]".
		if sp := strings.IndexByte(t, ' '); sp > 0 && isSchemeToken(t[:sp]) {
			rest := strings.TrimLeft(t[sp:], " ")
			if rest == "" || skipString(rest) {
				return redactText(v, nest)
			}
			return t[:sp] + " " + markerPrefix + kind + "]", 1
		}
		if isScheme(t) {
			return redactText(v, nest)
		}
	case "cookie":
	default:
		if start, end, k := matchToken(nil, t, 0); start == 0 && end == len(t) {
			kind = k
		}
	}
	return markerPrefix + kind + "]", 1
}

// isSchemeToken reports whether w can be an HTTP authentication scheme
// (letters, digits, '-'), as in "Bearer", "AWS4-HMAC-SHA256".
func isSchemeToken(w string) bool {
	for i := 0; i < len(w); i++ {
		if class[w[i]]&cAlnum == 0 && w[i] != '-' {
			return false
		}
	}
	return w != ""
}

// bytesString views b as a string without copying. The callers never keep
// the string beyond the call that receives it: a redacted result is always a
// new string.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
