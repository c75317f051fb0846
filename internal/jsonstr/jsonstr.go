// Package jsonstr writes Go strings as JSON strings, and floats as JSON
// numbers, as encoding/json writes them but without reflection, for
// the code that builds JSON by hand on hot paths (the hook's envelope, the
// redactor and the privacy previews).
package jsonstr

import (
	"strings"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/internal/swar"
)

// AppendQuoted appends s to dst as a quoted JSON string.
func AppendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends s to dst as the content of a JSON string: quotes,
// backslashes and control characters escaped (\b, \f, \n, \r, \t in their
// short forms, as encoding/json writes them), invalid UTF-8 (a cut log,
// binary output) replaced by U+FFFD so that stores that insist on valid
// UTF-8 accept it. '<', '>' and '&' stay as they are: nothing here is
// embedded in HTML.
func AppendEscaped(dst []byte, s string) []byte { return appendEscaped(dst, s, 0) }

// Decoded returns what a JSON string AppendEscaped writes of s decodes to:
// s with each byte that is not part of valid UTF-8 a U+FFFD. For a caller
// that measures or cuts text as it will be read back.
func Decoded(s []byte) string {
	var b strings.Builder
	b.Grow(len(s) + 32)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.Write(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// AppendQuotedHTML appends s to dst as a quoted JSON string exactly as
// encoding/json writes a string (json.Marshal, an Encoder that escapes
// HTML): as AppendQuoted does, and '<', '>', '&', U+2028 and U+2029 escaped
// as \u003c, \u003e, \u0026, \u2028 and \u2029. It is for documents that
// must stay byte for byte what json.Marshal made of them before.
func AppendQuotedHTML(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s, escHTML|escLineSep)
	return append(dst, '"')
}

// AppendQuotedNoHTML appends s to dst as a quoted JSON string exactly as an
// encoding/json Encoder with SetEscapeHTML(false) writes a string (the API's
// answers): as AppendQuoted does, and U+2028 and U+2029 escaped as \u2028
// and \u2029, which encoding/json escapes whatever the setting. It is for
// answers written by hand that must stay byte for byte what the Encoder
// made of them.
func AppendQuotedNoHTML(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s, escLineSep)
	return append(dst, '"')
}

// AppendArrayHTML appends ss to dst as a JSON array of strings, as
// encoding/json writes a non-nil []string (AppendQuotedHTML).
func AppendArrayHTML(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendQuotedHTML(dst, s)
	}
	return append(dst, ']')
}

// What appendEscaped escapes beyond AppendEscaped's escapes.
const (
	escHTML    = 1 << iota // '<', '>' and '&', as json.Marshal does
	escLineSep             // U+2028 and U+2029, as encoding/json always does
)

// appendEscaped is AppendEscaped, with encoding/json's further escapes
// that esc names.
func appendEscaped(dst []byte, s string, esc int) []byte {
	html, lineSep := esc&escHTML != 0, esc&escLineSep != 0
	const hex = "0123456789abcdef"
	// Bytes that need nothing are copied in runs, not one by one: most
	// text has no byte to escape at all.
	start := 0
	next := 0 // where to test eight bytes at a time again
	for i := 0; i < len(s); {
		if i >= next {
			// Eight plain bytes at a time: the words of ids, names and
			// paths, most of a text. The word that is not plain, or
			// the last bytes, are read byte by byte.
			for i+8 <= len(s) {
				if x := swar.LoadString(s, i); !plain8(x) || html && htmlIn8(x) {
					break
				}
				i += 8
			}
			if i >= len(s) {
				break
			}
			next = i + 8
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			start = i + size
		case lineSep && (r == '\u2028' || r == '\u2029'):
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			start = i + size
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// htmlIn8 reports whether one of the eight bytes of x is '<', '>' or '&'.
func htmlIn8(x uint64) bool {
	return swar.Has(x, '<')|swar.Has(x, '>')|swar.Has(x, '&') != 0
}

// plain8 reports whether the eight bytes of x are ASCII that needs no
// escape: none is below 0x20, '"', '\\' or 0x80 and above.
func plain8(x uint64) bool {
	return swar.Below(x, 0x20)|swar.Has(x, '"')|swar.Has(x, '\\')|swar.NonASCII(x) == 0
}
