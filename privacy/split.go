package privacy

import (
	"bytes"
	"encoding/json"
)

// The payload arrives decoded one level deep (map of raw values); tool_calls
// needs one level more. These splitters cut raw JSON into its elements
// without decoding or copying them, so that a 64 MiB tool_response inside
// tool_calls costs one fast pass, and so that the members keep their order
// and bytes. They assume valid JSON (the caller decoded the payload) but
// never panic on anything else: they report failure instead.

// member is one member of a JSON object.
type member struct {
	key   []byte // the key as written, quotes included
	name  string // the key decoded
	value []byte
}

// splitArray returns the elements of a JSON array.
func splitArray(b []byte) ([][]byte, bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	var elems [][]byte
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return elems, skipWS(b, i+1) == len(b)
	}
	for {
		end, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		elems = append(elems, b[i:end])
		i = skipWS(b, end)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return elems, skipWS(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// splitObject returns the members of a JSON object, in order.
func splitObject(b []byte) ([]member, bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	var members []member
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return members, skipWS(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		kend, ok := skipString(b, i)
		if !ok {
			return nil, false
		}
		key := b[i:kend]
		var name string
		if bytes.IndexByte(key, '\\') < 0 {
			name = string(key[1 : len(key)-1])
		} else if json.Unmarshal(key, &name) != nil {
			return nil, false
		}
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipWS(b, i+1)
		end, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		members = append(members, member{key: key, name: name, value: b[i:end]})
		i = skipWS(b, end)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return members, skipWS(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// skipValue returns the end of the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	case ',', ':', '}', ']':
		return 0, false
	}
	// A number or a literal runs up to the next delimiter.
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	return j, j > i
}

// skipString returns the end of the JSON string starting with the quote at
// b[i]. It jumps from quote to quote (bytes.IndexByte is vectorised), so long
// strings cost little.
func skipString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		j += k
		// The quote is escaped when an odd number of backslashes precedes it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
		j++
	}
}

func isDelim(c byte) bool {
	switch c {
	case ',', ':', '}', ']', '{', '[', '"', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
