package importer

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"github.com/hookwatch/hookwatch/internal/swar"
	"github.com/hookwatch/hookwatch/privacy"
)

// marshalPayload returns what json.Marshal returns for the payload p made
// from a transcript record, without reflecting over the large values: a
// json.RawMessage member (a tool's input or output, most of a transcript's
// bytes) is compacted and escaped by appendCompactHTML, as json.Marshal
// would, in one pass; strings and booleans are written directly, and the
// rest (the usage) by json.Marshal. The keys are the payloads' member
// names, which need no escape. The envelope's payload, and so its bytes as
// stored and its preview's length, are those json.Marshal made before
// (TestMarshalPayload, FuzzMarshalPayload, TestImportGolden).
func marshalPayload(p map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(p))
	size := 2
	for k, v := range p {
		keys = append(keys, k)
		size += len(k) + 4
		if raw, ok := v.(json.RawMessage); ok {
			size += len(raw)
		} else {
			size += 32
		}
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.AppendQuoted(b, k)
		b = append(b, ':')
		switch v := p[k].(type) {
		case encoded:
			b = append(b, v...)
		case json.RawMessage:
			if v == nil {
				b = append(b, "null"...)
				break
			}
			b = appendCompactHTML(b, v)
		case string:
			if strings.ContainsAny(v, "<>&") || strings.Contains(v, "\u2028") || strings.Contains(v, "\u2029") {
				vb, _ := json.Marshal(v)
				b = append(b, vb...)
				break
			}
			b = jsonstr.AppendQuoted(b, v) // as json.Marshal but for those
		case bool:
			b = strconv.AppendBool(b, v)
		default:
			vb, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			b = append(b, vb...)
		}
	}
	return append(b, '}'), nil
}

// encoded is a payload member already in its final encoding, which
// marshalPayload writes as it is.
type encoded []byte

// captured returns a tool's output raw (valid JSON) as the pipeline's
// privacy rules o leave it in the payload json.Marshal made of it: the
// output as json.Marshal writes it (compacted, escaped), its invalid UTF-8
// replaced as event.Decode replaces it, then captured (privacy.Member).
// The pipeline applies the rules again, which changes nothing (they are
// idempotent), but it no longer decodes the whole output — most of a
// transcript's bytes — only to cut it to a preview (FuzzCaptured).
func captured(raw json.RawMessage, o privacy.Options) encoded {
	b := appendCompactHTML(make([]byte, 0, len(raw)+len(raw)/64), raw)
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	v, _ := privacy.Member("tool_response", b, nil, o)
	return encoded(v)
}

// appendCompactHTML appends the valid JSON text src to dst as json.Marshal
// writes a json.RawMessage: the blanks between tokens removed, and '<', '>',
// '&', U+2028 and U+2029 written as \u escapes. src must be valid JSON (a
// member of a line jsonscan validated): it is not checked.
func appendCompactHTML(dst, src []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	inString := false
	for i := 0; i < len(src); i++ {
		if inString {
			i = stringSpan(src, i)
			if i >= len(src) {
				break
			}
		}
		c := src[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte, whatever it is
			case '"':
				inString = false
			case '<', '>', '&':
				dst = append(dst, src[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
				start = i + 1
			case 0xE2:
				if i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8 {
					dst = append(dst, src[start:i]...)
					dst = append(dst, '\\', 'u', '2', '0', '2', hex[src[i+2]&0xF])
					start = i + 3
					i += 2
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// stringSpan returns the index of the first byte at or after i that
// appendCompactHTML must look at inside a string: a quote, a backslash,
// '<', '>', '&' or 0xE2 (the first byte of U+2028 and U+2029). It tests
// eight bytes at a time: tool output is mostly long strings of plain text.
func stringSpan(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := swar.Load(b, i)
		if swar.Has(x, '"')|swar.Has(x, '\\')|swar.Has(x, '<')|swar.Has(x, '>')|
			swar.Has(x, '&')|swar.Has(x, 0xE2) != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case '"', '\\', '<', '>', '&', 0xE2:
			return i
		}
	}
	return i
}
