package redact

import (
	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth is encoding/json's nesting limit: JSON agrees with json.Valid on
// what is valid.
const maxDepth = 10000

// JSON walks the JSON value raw and redacts every string value as String
// does; a string whose object key names a secret ("password", "api_key",
// "Authorization", …) is replaced whole. Object keys, numbers, structure,
// key order, whitespace and every byte outside a redacted string are kept.
// It returns raw itself when nothing was redacted, and also, with n == 0,
// when raw is not valid JSON. It never panics.
func JSON(raw []byte) (out []byte, n int) {
	w := walker{raw: raw}
	if !w.walk() || w.n == 0 {
		return raw, 0
	}
	w.out = append(w.out, raw[w.last:]...)
	return w.out, w.n
}

// walker validates raw and builds the redacted copy lazily, like scanner.
type walker struct {
	raw  []byte
	out  []byte
	last int // raw[last:] has not been copied to out yet
	n    int
	buf  []byte // scratch for decoding escaped strings
}

// walk validates the whole value iteratively (an explicit stack: hostile
// nesting cannot overflow the goroutine stack) and redacts string values on
// the way. It reports whether raw is valid JSON.
func (w *walker) walk() bool {
	b := w.raw
	var stack []byte // '{' or '[' of every open container
	i := skipWS(b, 0)
	kind := "" // secret kind named by the key of the value at i
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		var ok bool
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) >= maxDepth {
				return false
			}
			stack = append(stack, c)
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' and ']' follow '{' and '[' by two
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, kind, ok = w.key(i); !ok {
					return false
				}
			} else {
				kind = ""
			}
			continue
		case '"':
			end, esc, ok := scanString(b, i)
			if !ok {
				return false
			}
			w.value(i, end, esc, kind)
			i = end
		case 't':
			if i, ok = literal(b, i, "true"); !ok {
				return false
			}
		case 'f':
			if i, ok = literal(b, i, "false"); !ok {
				return false
			}
		case 'n':
			if i, ok = literal(b, i, "null"); !ok {
				return false
			}
		default:
			if i, ok = number(b, i); !ok {
				return false
			}
		}
		// After a value: close containers, or move on to the next element.
		for {
			i = skipWS(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			if b[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = skipWS(b, i+1)
			if top == '{' {
				if i, kind, ok = w.key(i); !ok {
					return false
				}
			} else {
				kind = ""
			}
			break
		}
	}
}

// key parses `"key" :` at i and returns where the value starts and the secret
// kind the key names.
func (w *walker) key(i int) (int, string, bool) {
	b := w.raw
	if i >= len(b) || b[i] != '"' {
		return 0, "", false
	}
	end, esc, ok := scanString(b, i)
	if !ok {
		return 0, "", false
	}
	var kind string
	if esc {
		w.buf = decodeString(w.buf[:0], b[i+1:end-1])
		kind = nameKind(bytesString(w.buf))
	} else {
		kind = nameKind(bytesString(b[i+1 : end-1]))
	}
	if kind == "signature" {
		kind = "" // "signature": "func(x int)" in code-intelligence output
	}
	j := skipWS(b, end)
	if j >= len(b) || b[j] != ':' {
		return 0, "", false
	}
	return skipWS(b, j+1), kind, true
}

// value redacts the string value b[start:end] (quotes included).
func (w *walker) value(start, end int, esc bool, kind string) {
	content := w.raw[start+1 : end-1]
	if len(content) == 0 {
		return
	}
	if !esc {
		// Redaction only removes bytes and inserts ASCII markers, so the
		// result needs no escaping either.
		r, n := redactValue(bytesString(content), kind)
		if n > 0 {
			w.replace(start+1, end-1, r, false)
			w.n += n
		}
		return
	}
	if cap(w.buf) < len(content) {
		// Decoding never lengthens a string: size the scratch once.
		w.buf = make([]byte, 0, len(content))
	}
	w.buf = decodeString(w.buf[:0], content)
	r, n := redactValue(bytesString(w.buf), kind)
	if n > 0 {
		w.replace(start+1, end-1, r, true)
		w.n += n
	}
}

// replace puts r in place of raw[start:end], escaping it when asked.
func (w *walker) replace(start, end int, r string, escape bool) {
	if w.out == nil {
		w.out = make([]byte, 0, len(w.raw)+32)
	}
	w.out = append(w.out, w.raw[w.last:start]...)
	if escape {
		w.out = jsonstr.AppendEscaped(w.out, r)
	} else {
		w.out = append(w.out, r...)
	}
	w.last = end
}

// redactValue redacts a decoded string value whose key names kind ("" for
// none). The result never aliases v when n > 0.
func redactValue(v, kind string) (string, int) {
	if kind == "" {
		return String(v)
	}
	t := strings.TrimSpace(v)
	if t == "" || skipValue(t) {
		return String(v)
	}
	switch kind {
	case "authorization":
		// Keep the scheme: "Bearer [REDACTED:authorization]".
		if sp := strings.IndexByte(t, ' '); sp > 0 && isSchemeToken(t[:sp]) {
			rest := strings.TrimLeft(t[sp:], " ")
			if rest == "" || skipValue(rest) {
				return String(v)
			}
			return t[:sp] + " " + markerPrefix + kind + "]", 1
		}
		if isScheme(t) {
			return String(v)
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

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString validates the string starting with the quote at b[i] and
// returns the index after its closing quote and whether it holds escapes.
func scanString(b []byte, i int) (end int, esc, ok bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, esc, true
		case c == '\\':
			esc = true
			j++
			if j >= len(b) {
				return 0, false, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return 0, false, false
				}
				j += 4
			default:
				return 0, false, false
			}
		case c < 0x20:
			return 0, false, false
		}
	}
	return 0, false, false
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// number validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i].
func number(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// decodeString appends the decoded content of a valid JSON string (without
// its quotes) to dst. Like encoding/json, an invalid surrogate becomes U+FFFD;
// other bytes, even invalid UTF-8, are kept as they are so that decoding what
// jsonstr.AppendEscaped wrote gives back the same text.
func decodeString(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := rune(hex4(s[i+1:]))
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					r2 = rune(hex4(s[i+3:]))
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, s[i])
		}
	}
	return dst
}

func hex4(s []byte) int {
	v := 0
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		v = v<<4 | int(c)
	}
	return v
}
