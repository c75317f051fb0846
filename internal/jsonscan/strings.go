package jsonscan

import "bytes"

// Str is one string found by Strings.
type Str struct {
	// Start and End bound the string's content, quotes excluded.
	Start, End int
	// Closed reports that the closing quote is in the text; when false the
	// text ends inside the string, and End is the end of the text.
	Closed bool
	// Key reports an object key: ':' follows the string.
	Key bool
	// KeyStart and KeyEnd bound the content of the key whose value this
	// string is, when it directly follows one ("key": "value"); both are
	// -1 otherwise.
	KeyStart, KeyEnd int
}

// Strings finds the strings of a text that is JSON, or was cut from JSON,
// or is not JSON at all. It never fails: a quote starts a string, the next
// unescaped quote ends it. It does not validate; use Scanner for that.
//
// Strings is linear in the length of the text and skips from quote to quote
// (bytes.IndexByte), so walking a 64 MiB tool output costs a few
// milliseconds. It does not look for escapes: a caller that decodes a
// string checks the part it reads (a string may be longer than that part).
type Strings struct {
	text       []byte
	pos        int
	valueAt    int // where the value of the last key starts, or -1
	keyS, keyE int
}

// NewStrings returns an iterator over the strings of text.
func NewStrings(text []byte) Strings {
	return Strings{text: text, valueAt: -1}
}

// Next returns the next string, or false at the end of the text.
func (it *Strings) Next() (Str, bool) {
	b := it.text
	if it.pos >= len(b) {
		return Str{}, false
	}
	k := bytes.IndexByte(b[it.pos:], '"')
	if k < 0 {
		it.pos = len(b)
		return Str{}, false
	}
	q := it.pos + k
	s := Str{Start: q + 1, End: len(b), KeyStart: -1, KeyEnd: -1}
	if q == it.valueAt {
		s.KeyStart, s.KeyEnd = it.keyS, it.keyE
	}
	it.valueAt = -1
	if e, ok := closingQuote(b, q+1); ok {
		s.End, s.Closed = e, true
	}
	it.pos = s.End + 1
	if s.Closed {
		if j := skipBlank(b, s.End+1); j < len(b) && b[j] == ':' {
			s.Key = true
			it.valueAt, it.keyS, it.keyE = skipBlank(b, j+1), s.Start, s.End
			it.pos = j + 1
		}
	}
	return s, true
}
