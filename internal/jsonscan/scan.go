// Package jsonscan reads JSON text that nobody vouches for — hook payloads,
// tool output, previews cut at a byte budget — without reflection and
// without copying: the hook's decoder, the privacy rules, the redactor and
// attribution all read it through this package.
//
// It has two readers:
//
//   - Scanner validates exactly as encoding/json does (json.Valid, and its
//     nesting limit of MaxDepth) and reports the tokens of one value with
//     their byte ranges, so that callers keep every byte they do not change.
//     Members and Elements split an object or an array with it.
//   - Strings finds the strings of any text, valid JSON or not, a document
//     cut at its end or taken from its middle: it is what a redactor needs,
//     as a secret can sit in a string of a truncated preview as well as in a
//     valid payload.
//
// Neither panics, neither recurses (hostile nesting cannot overflow the
// stack), and both are linear in the length of their input. The package
// does no work at init and links only standard packages the hook links
// already (bytes, encoding/binary, unicode/utf8 and utf16) and internal/swar,
// as the hook reads every payload with it.
package jsonscan

import "github.com/hookwatch/hookwatch/internal/swar"

// MaxDepth is encoding/json's nesting limit: Scanner agrees with json.Valid
// on what is valid.
const MaxDepth = 10000

// Kind is the kind of a token.
type Kind uint8

// The token kinds.
const (
	// Invalid reports a syntax error at Token.Start; the scanner stays there.
	Invalid Kind = iota
	// End reports the end of a valid value (only trailing blanks follow).
	End
	BeginObject
	EndObject
	BeginArray
	EndArray
	// Key is an object key; Start and End include its quotes, and the ':'
	// after it was consumed.
	Key
	// String is a string value; Start and End include its quotes.
	String
	Number
	// Literal is true, false or null.
	Literal
)

// Token is one token of a value.
type Token struct {
	Kind       Kind
	Start, End int // data[Start:End] is the token's text
	// Escaped reports that a Key or String holds a backslash escape: its
	// text differs from its value.
	Escaped bool
}

// What the scanner expects next.
const (
	stValue      = iota // a value
	stFirstValue        // a value or ']' (after '[')
	stFirstKey          // a key or '}' (after '{')
	stKey               // a key (after ',' in an object)
	stAfter             // ',' or the end of the container, or of the input
	stDone
	stError
)

// Scanner reads the tokens of one JSON value in order, validating as it
// goes. Its zero value is not usable: use NewScanner.
type Scanner struct {
	data     []byte
	pos      int
	state    uint8
	depth    int
	maxDepth int
	objects  uint64   // bit d: level d is an object (levels below 64)
	deep     []uint64 // the same for the levels from 64 on
}

// NewScanner returns a scanner of data, which must hold one JSON value
// (blanks around it allowed).
func NewScanner(data []byte) Scanner {
	return Scanner{data: data}
}

// Depth returns the number of containers open after the last token.
func (s *Scanner) Depth() int { return s.depth }

// MaxDepthSeen returns the deepest nesting reached so far: 0 for a scalar,
// 1 for an object or array of scalars.
func (s *Scanner) MaxDepthSeen() int { return s.maxDepth }

// Next returns the next token. After End or Invalid it returns the same
// kind again.
func (s *Scanner) Next() Token {
	b := s.data
	i := skipBlank(b, s.pos)
	switch s.state {
	case stValue:
		return s.value(i)
	case stFirstValue:
		if i < len(b) && b[i] == ']' {
			return s.close(i, EndArray)
		}
		return s.value(i)
	case stFirstKey:
		if i < len(b) && b[i] == '}' {
			return s.close(i, EndObject)
		}
		return s.key(i)
	case stKey:
		return s.key(i)
	case stAfter:
		if s.depth == 0 {
			if i == len(b) {
				s.state, s.pos = stDone, i
				return Token{Kind: End, Start: i, End: i}
			}
			return s.fail(i)
		}
		if i >= len(b) {
			return s.fail(i)
		}
		obj := s.inObject()
		switch c := b[i]; {
		case c == ',':
			i = skipBlank(b, i+1)
			if obj {
				return s.key(i)
			}
			return s.value(i)
		case c == '}' && obj:
			return s.close(i, EndObject)
		case c == ']' && !obj:
			return s.close(i, EndArray)
		}
		return s.fail(i)
	case stDone:
		return Token{Kind: End, Start: s.pos, End: s.pos}
	}
	return Token{Kind: Invalid, Start: s.pos, End: s.pos}
}

func (s *Scanner) fail(i int) Token {
	s.state, s.pos = stError, i
	return Token{Kind: Invalid, Start: i, End: i}
}

func (s *Scanner) key(i int) Token {
	b := s.data
	if i >= len(b) || b[i] != '"' {
		return s.fail(i)
	}
	end, esc, ok := stringEnd(b, i)
	if !ok {
		return s.fail(i)
	}
	j := skipBlank(b, end)
	if j >= len(b) || b[j] != ':' {
		return s.fail(j)
	}
	s.state, s.pos = stValue, j+1
	return Token{Kind: Key, Start: i, End: end, Escaped: esc}
}

func (s *Scanner) value(i int) Token {
	b := s.data
	if i >= len(b) {
		return s.fail(i)
	}
	t := Token{Start: i}
	var ok bool
	switch c := b[i]; c {
	case '{', '[':
		if s.depth >= MaxDepth {
			return s.fail(i)
		}
		s.push(c == '{')
		s.pos = i + 1
		if c == '{' {
			s.state = stFirstKey
			return Token{Kind: BeginObject, Start: i, End: i + 1}
		}
		s.state = stFirstValue
		return Token{Kind: BeginArray, Start: i, End: i + 1}
	case '"':
		t.Kind = String
		t.End, t.Escaped, ok = stringEnd(b, i)
	case 't':
		t.Kind = Literal
		t.End, ok = literal(b, i, "true")
	case 'f':
		t.Kind = Literal
		t.End, ok = literal(b, i, "false")
	case 'n':
		t.Kind = Literal
		t.End, ok = literal(b, i, "null")
	default:
		t.Kind = Number
		t.End, ok = number(b, i)
	}
	if !ok {
		return s.fail(i)
	}
	s.state, s.pos = stAfter, t.End
	return t
}

func (s *Scanner) close(i int, k Kind) Token {
	s.depth--
	s.state, s.pos = stAfter, i+1
	return Token{Kind: k, Start: i, End: i + 1}
}

func (s *Scanner) push(object bool) {
	d := s.depth
	s.depth++
	s.maxDepth = max(s.maxDepth, s.depth)
	if d < 64 {
		if object {
			s.objects |= 1 << d
		} else {
			s.objects &^= 1 << d
		}
		return
	}
	w, bit := (d-64)/64, uint((d-64)%64)
	for len(s.deep) <= w {
		s.deep = append(s.deep, 0)
	}
	if object {
		s.deep[w] |= 1 << bit
	} else {
		s.deep[w] &^= 1 << bit
	}
}

// inObject reports whether the innermost open container is an object.
func (s *Scanner) inObject() bool {
	d := s.depth - 1
	if d < 64 {
		return s.objects&(1<<d) != 0
	}
	return s.deep[(d-64)/64]&(1<<uint((d-64)%64)) != 0
}

// Skip consumes the rest of the value whose first token is t (a container
// is read to its end) and returns the index after it, or false on a syntax
// error.
func (s *Scanner) Skip(t Token) (end int, ok bool) {
	switch t.Kind {
	case BeginObject, BeginArray:
	case Invalid, End, EndObject, EndArray, Key:
		return 0, false
	default:
		return t.End, true
	}
	for d := s.depth - 1; ; {
		t = s.Next()
		switch t.Kind {
		case Invalid, End:
			return 0, false
		case EndObject, EndArray:
			if s.depth == d {
				return t.End, true
			}
		}
	}
}

// Valid reports whether data is one valid JSON value, as json.Valid does,
// and how deeply it nests (0 for a scalar).
func Valid(data []byte) (depth int, ok bool) {
	s := NewScanner(data)
	for {
		switch s.Next().Kind {
		case End:
			return s.maxDepth, true
		case Invalid:
			return s.maxDepth, false
		}
	}
}

// Members calls fn with every member of the JSON object data, in order:
// key is the key as written, quotes included (see Name), and val its value
// as written. It reports whether data is one valid JSON object (blanks
// around it allowed) and how deeply it nests (the object itself is 1). On
// invalid input fn may have been called for the members before the error.
func Members(data []byte, fn func(key, val []byte)) (depth int, ok bool) {
	s := NewScanner(data)
	if s.Next().Kind != BeginObject {
		return s.maxDepth, false
	}
	if _, ok := s.Members(fn); !ok {
		return s.maxDepth, false
	}
	return s.maxDepth, s.Next().Kind == End
}

// Members is the package's Members of the object whose BeginObject token s
// returned last, read in place: it calls fn with every member as the
// object's text holds it, consumes the object and returns the index after
// it, or false on a syntax error (fn may have been called for the members
// before it). A reader of a document of objects (a batch of envelopes)
// reads each member once this way, where Members of each object's text,
// once found, would read the object a second time.
func (s *Scanner) Members(fn func(key, val []byte)) (end int, ok bool) {
	return s.MembersIn(fn, "", nil) // no key is written "": it has its quotes
}

// MembersIn is Members, except that when the value of the member whose key
// is written inner (quotes included) is an object, its members are given to
// innerFn as that object is read, before fn is called with the whole: a
// reader of objects in objects (a batch's envelopes and their payloads)
// splits the inner one in the same pass. innerFn is called for each member
// given so; with a key given twice, for each.
func (s *Scanner) MembersIn(fn func(key, val []byte), inner string, innerFn func(key, val []byte)) (end int, ok bool) {
	data := s.data
	for {
		k := s.Next()
		switch k.Kind {
		case EndObject:
			return k.End, true
		case Key:
		default:
			return 0, false
		}
		v := s.Next()
		var end int
		var ok bool
		if v.Kind == BeginObject && inner != "" && string(data[k.Start:k.End]) == inner {
			end, ok = s.Members(innerFn)
		} else {
			end, ok = s.Skip(v)
		}
		if !ok {
			return 0, false
		}
		fn(data[k.Start:k.End], data[v.Start:end])
	}
}

// Elements calls fn with every element of the JSON array data, in order,
// as written. It reports whether data is one valid JSON array (blanks
// around it allowed) and how deeply it nests (the array itself is 1). On
// invalid input fn may have been called for the elements before the error.
func Elements(data []byte, fn func(elem []byte)) (depth int, ok bool) {
	s := NewScanner(data)
	if s.Next().Kind != BeginArray {
		return s.maxDepth, false
	}
	for {
		v := s.Next()
		if v.Kind == EndArray {
			return s.maxDepth, s.Next().Kind == End
		}
		end, ok := s.Skip(v)
		if !ok {
			return s.maxDepth, false
		}
		fn(data[v.Start:end])
	}
}

// TrimBlank returns b without the blanks JSON allows around a value (space,
// tab, line feed, carriage return). Unlike bytes.TrimSpace it keeps the
// other spaces of Unicode (form feed, no-break space…), which no JSON
// reader takes for blanks, so that what is trimmed is still refused.
func TrimBlank(b []byte) []byte {
	i := skipBlank(b, 0)
	j := len(b)
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\n' || b[j-1] == '\r') {
		j--
	}
	return b[i:j]
}

func skipBlank(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd validates the string starting with the quote at b[i] and
// returns the index after its closing quote and whether it holds escapes.
func stringEnd(b []byte, i int) (end int, esc, ok bool) {
	for j := i + 1; ; j++ {
		j = plainEnd(b, j)
		if j >= len(b) {
			return 0, false, false
		}
		switch b[j] {
		case '"':
			return j + 1, esc, true
		case '\\':
			esc = true
			j++
			if j >= len(b) {
				return 0, false, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || hex4(b[j+1:j+5]) < 0 {
					return 0, false, false
				}
				j += 4
			default:
				return 0, false, false
			}
		default: // a control character
			return 0, false, false
		}
	}
}

// plainEnd returns the index of the first byte at or after j that a string
// cannot hold as it is: a quote, a backslash or a control character. It
// tests eight bytes at a time, as tool output is mostly long strings.
func plainEnd(b []byte, j int) int {
	for ; j+8 <= len(b); j += 8 {
		x := swar.Load(b, j)
		if swar.Has(x, '"')|swar.Has(x, '\\')|swar.Below(x, 0x20) != 0 {
			break
		}
	}
	for ; j < len(b); j++ {
		if c := b[j]; c < 0x20 || c == '"' || c == '\\' {
			return j
		}
	}
	return j
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
