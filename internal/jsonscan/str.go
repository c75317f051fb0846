package jsonscan

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote returns the value of the JSON string literal lit (quotes
// included) as encoding/json decodes it, and false when lit is not exactly
// one valid string literal.
func Unquote(lit []byte) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' {
		return "", false
	}
	end, esc, ok := stringEnd(lit, 0)
	if !ok || end != len(lit) {
		return "", false
	}
	content := lit[1 : end-1]
	if !esc && utf8.Valid(content) {
		return string(content), true
	}
	return string(AppendDecoded(make([]byte, 0, len(content)), content)), true
}

// Interned is a small table of recent string values, for fields whose
// values repeat from one document to the next (a client's name, a host, a
// session's id and directory): its Unquote returns the table's string
// instead of a new one when the value is there. Its memory is bounded
// whatever the input: a fixed number of slots, each holding one value of
// at most MaxInterned bytes; a new value takes the slot its hash names, so
// distinct values only replace one another. The zero value is ready to
// use; it is safe for concurrent use.
type Interned struct {
	slots [256]atomic.Pointer[string]
}

// MaxInterned is the length of the longest value an Interned keeps.
const MaxInterned = 128

// Unquote is Unquote(lit), except that a value held by the table is
// returned as the table holds it, and a short plain value that is not is
// kept in its slot.
func (t *Interned) Unquote(lit []byte) (string, bool) {
	if len(lit) < 2 || len(lit) > MaxInterned+2 || lit[0] != '"' {
		return Unquote(lit)
	}
	end, esc, ok := stringEnd(lit, 0)
	if !ok || end != len(lit) || esc {
		return Unquote(lit)
	}
	content := lit[1 : end-1]
	if !utf8.Valid(content) {
		return Unquote(lit)
	}
	slot := &t.slots[internHash(content)%uint64(len(t.slots))]
	if p := slot.Load(); p != nil && *p == string(content) {
		return *p, true
	}
	v := string(content)
	slot.Store(&v)
	return v, true
}

// internHash mixes the length and three words of b, its start, middle and
// end: values of a field differ near their end (an id, a file name) or
// anywhere in a short one, and a byte-by-byte hash of a 100-byte path costs
// more than the allocation it saves. A collision costs a slot, not a
// wrong answer.
func internHash(b []byte) uint64 {
	h := uint64(len(b))
	if len(b) >= 8 {
		h ^= binary.LittleEndian.Uint64(b)
		h = (h ^ h>>29) * 0xbf58476d1ce4e5b9
		h ^= binary.LittleEndian.Uint64(b[len(b)/2-4:])
		h = (h ^ h>>29) * 0xbf58476d1ce4e5b9
		h ^= binary.LittleEndian.Uint64(b[len(b)-8:])
	} else {
		for _, c := range b {
			h = h<<8 | uint64(c)
		}
	}
	h = (h ^ h>>31) * 0x94d049bb133111eb
	return h ^ h>>32
}

// Name returns the name a valid key literal (quotes included, as Members
// gives it) stands for, as encoding/json decodes it: a slice of key when it
// holds no escape and is valid UTF-8, else a decoded copy.
func Name(key []byte) []byte {
	if len(key) < 2 {
		return nil
	}
	content := key[1 : len(key)-1]
	if bytes.IndexByte(content, '\\') < 0 && utf8.Valid(content) {
		return content
	}
	return AppendDecoded(nil, content)
}

// AppendDecoded appends the decoded text of the string content s (the
// bytes between the quotes) to dst, as encoding/json decodes a valid
// string: escapes resolved, an unpaired surrogate and invalid UTF-8
// replaced by U+FFFD, so the result is always valid UTF-8. It is lenient
// about anything else, as s may be cut from a longer text: an escape cut by
// the end of s is dropped, a backslash that starts no escape is kept as
// it is, and so is a control character.
func AppendDecoded(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' {
			if i+1 >= len(s) {
				return dst // an escape cut by the end
			}
			switch e := s[i+1]; e {
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
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'u':
				if i+6 > len(s) && hex4prefix(s[i+2:]) {
					return dst // cut inside the escape
				}
				r := rune(-1)
				if i+6 <= len(s) {
					r = hex4(s[i+2 : i+6])
				}
				if r < 0 {
					dst = append(dst, '\\')
					i++
					continue
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s[i+2 : i+6])
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default:
				dst = append(dst, '\\')
				i++
				continue
			}
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// DecodeCut returns the text of the start of a JSON string literal (its
// opening quote included) that may be cut anywhere, as the head of a
// preview is: what decodes of it up to its closing quote or its end, an
// escape cut by the end dropped.
func DecodeCut(lit []byte) string {
	if len(lit) == 0 || lit[0] != '"' {
		return ""
	}
	end := len(lit)
	if e, ok := closingQuote(lit, 1); ok {
		end = e
	}
	return string(AppendDecoded(nil, lit[1:end]))
}

// CleanStart returns the first index at or after i at which the string
// content s can be decoded on its own: i itself unless it falls inside an
// escape sequence (a piece of text taken from the middle of a string).
func CleanStart(s []byte, i int) int {
	if i <= 0 {
		return 0
	}
	if i >= len(s) {
		return len(s)
	}
	// Is s[k] the first byte after an escape's backslash? Only when an odd
	// run of backslashes ends at k-1.
	escapes := func(k int) bool {
		n := 0
		for p := k - 1; p >= 0 && s[p] == '\\'; p-- {
			n++
		}
		return n%2 == 1
	}
	if escapes(i) {
		if s[i] == 'u' {
			return min(i+5, len(s))
		}
		return i + 1
	}
	for k := i - 1; k >= max(0, i-4); k-- {
		if s[k] == 'u' && escapes(k) {
			return min(k+5, len(s))
		}
	}
	return i
}

// closingQuote returns the index of the quote that ends the string whose
// content starts at b[from], skipping escaped quotes.
func closingQuote(b []byte, from int) (int, bool) {
	j := from
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		j += k
		// The quote is escaped when an odd run of backslashes precedes it.
		n := 0
		for p := j - 1; p >= from && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j, true
		}
		j++
	}
}

// hex4 returns the value of four hex digits, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var v rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		v = v<<4 | rune(c)
	}
	return v
}

// hex4prefix reports whether s, shorter than four bytes, could start four
// hex digits.
func hex4prefix(s []byte) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
