package event

import "github.com/hookwatch/hookwatch/internal/jsonscan"

// ScanObject calls fn with the key (decoded) and the raw value of every
// member of the JSON object data, in order, and returns the nesting depth of
// data as Decode counts it (the object itself is 1). data must be valid JSON
// (json.Valid); on anything else it stops at the first syntax error.
func ScanObject(data []byte, fn func(key, val []byte)) (depth int) {
	depth, _ = jsonscan.Members(data, func(key, val []byte) { fn(jsonscan.Name(key), val) })
	return depth
}
