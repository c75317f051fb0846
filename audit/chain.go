package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"unsafe"
)

// The hash chain. Every line is one JSON object, the record's members in
// their order, then three members the chain adds:
//
//	{…record…,"line":N,"prev":"<hash of line N-1>","hash":"<hash of this line>"}
//
// line counts the lines of the stream from 1, across rotated segments;
// prev is "" on line 1. hash is the lowercase hex SHA-256 of the line's
// body: the line without its trailing `,"hash":"…"` member, closed with
// "}" — so it covers the record, its position and its predecessor's hash.
// Editing a line breaks its hash; recomputing that hash breaks the next
// line's prev; removing or reordering lines breaks the line numbers and
// the prevs; a cut file ends without a newline.
//
// The encoding is canonical by construction: the record types append
// themselves (encode.go), and Verify hashes the bytes as they are, so a
// verifier never encodes anything again.

// hashMember is what follows a line's body: `,"hash":"` 64 hex digits `"}`.
const (
	hashPrefix = `,"hash":"`
	hashLen    = sha256.Size * 2
	hashTail   = len(hashPrefix) + hashLen + len(`"}`)
)

// link is the position of a stream: the last line written and its hash.
type link struct {
	line int64
	hash string
}

// record is a record type of the trail: it appends itself as one compact
// JSON object, its members in the order of its fields.
type record interface {
	appendJSON(dst []byte) []byte
}

// appendLine appends record rec to dst as the line after at, and returns
// dst and the new position. The position's hash is the bytes of dst that
// hold it, not a copy: a line is made per record, and only the last
// position of a batch is kept (stream.write copies it).
func appendLine(dst []byte, rec record, at link) ([]byte, link) {
	start := len(dst)
	dst = rec.appendJSON(dst)
	dst = append(dst[:len(dst)-1], `,"line":`...) // the record's closing brace
	next := link{line: at.line + 1}
	dst = strconv.AppendInt(dst, next.line, 10)
	dst = append(dst, `,"prev":"`...)
	dst = append(dst, at.hash...)
	dst = append(dst, '"', '}')
	sum := sha256.Sum256(dst[start:])
	dst = append(dst[:len(dst)-1], hashPrefix...)
	h := len(dst)
	dst = hex.AppendEncode(dst, sum[:])
	next.hash = unsafe.String(&dst[h], hashLen)
	dst = append(dst, '"', '}', '\n')
	return dst, next
}

// lineHeader is what Verify reads of a line.
type lineHeader struct {
	Line int64  `json:"line"`
	Prev string `json:"prev"`
	// Hash is the hash the line carries; Sum the hash of its body.
	Hash string `json:"-"`
	Sum  string `json:"-"`
}

// readLine checks the form of one line (without its newline) and returns
// its chain members and the hash of its body.
func readLine(line []byte) (lineHeader, error) {
	var h lineHeader
	if len(line) < hashTail+2 || !bytes.HasSuffix(line, []byte(`"}`)) ||
		!bytes.Equal(line[len(line)-hashTail:len(line)-hashTail+len(hashPrefix)], []byte(hashPrefix)) {
		return h, fmt.Errorf("no hash member at the end of the line")
	}
	h.Hash = string(line[len(line)-hashLen-2 : len(line)-2])
	if _, err := hex.DecodeString(h.Hash); err != nil {
		return h, fmt.Errorf("the hash is not hexadecimal")
	}
	body := make([]byte, 0, len(line)-hashTail+1)
	body = append(append(body, line[:len(line)-hashTail]...), '}')
	sum := sha256.Sum256(body)
	h.Sum = hex.EncodeToString(sum[:])
	if err := json.Unmarshal(line, &h); err != nil {
		return h, fmt.Errorf("not a JSON object: %w", err)
	}
	if h.Line < 1 {
		return h, fmt.Errorf("no line number")
	}
	return h, nil
}
