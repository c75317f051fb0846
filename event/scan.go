package event

import (
	"bytes"
	"encoding/json"
)

// ScanObject calls fn with the key (unescaped) and the raw value of every
// member of the JSON object data, in order, and returns the nesting depth of
// data as Decode counts it (the object itself is 1). data must be valid JSON (json.Valid): the
// scanner does not check syntax, only stays within bounds.
func ScanObject(data []byte, fn func(key, val []byte)) (depth int) {
	depth = 1
	i := skipSpace(data, 1)
	for i < len(data) && data[i] == '"' {
		ke := endOfString(data, i)
		key := data[min(i+1, ke):max(i+1, ke-1)]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			if json.Unmarshal(data[i:ke], &s) == nil {
				key = []byte(s)
			}
		}
		i = skipSpace(data, ke)
		if i < len(data) && data[i] == ':' {
			i = skipSpace(data, i+1)
		}
		ve, d := endOfValue(data, i)
		depth = max(depth, 1+d)
		fn(key, data[i:ve])
		i = skipSpace(data, ve)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return depth
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// endOfString returns the index after the string starting at data[i] == '"'.
func endOfString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// endOfValue returns the index after the value starting at data[i], and its
// nesting depth (0 for a scalar).
func endOfValue(data []byte, i int) (end, depth int) {
	if i >= len(data) {
		return len(data), 0
	}
	switch data[i] {
	case '"':
		return endOfString(data, i), 0
	case '{', '[':
		d := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = endOfString(data, j) - 1
			case '{', '[':
				d++
				depth = max(depth, d)
			case '}', ']':
				d--
				if d == 0 {
					return j + 1, depth
				}
			}
		}
		return len(data), depth
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, 0
		}
		j++
	}
	return j, 0
}
