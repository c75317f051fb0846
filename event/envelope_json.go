package event

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// AppendJSON appends the envelope's JSON encoding to b: the same document
// json.Marshal produces, without reflection. The hook encodes one envelope
// per process, where encoding/json's first use of a type (building its
// encoder by reflection) costs more than the rest of the hook's work.
// e.Payload, e.Decision must be valid JSON (as json.Marshal requires);
// they are copied as they are.
func (e *Envelope) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"runtime":`...)
	b = appendString(b, e.Runtime)
	if e.Kind != "" {
		b = append(b, `,"kind":`...)
		b = appendString(b, e.Kind)
	}
	b = append(b, `,"received_at":"`...)
	b = e.ReceivedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if e.Host != "" {
		b = append(b, `,"host":`...)
		b = appendString(b, e.Host)
	}
	if e.User != "" {
		b = append(b, `,"user":`...)
		b = appendString(b, e.User)
	}
	if e.HookwatchVersion != "" {
		b = append(b, `,"hookwatch_version":`...)
		b = appendString(b, e.HookwatchVersion)
	}
	if e.Subagent != nil {
		// Rare (subagent events only) and small: reflection is fine here.
		if m, err := json.Marshal(e.Subagent); err == nil {
			b = append(b, `,"subagent":`...)
			b = append(b, m...)
		}
	}
	if len(e.Decision) > 0 {
		b = append(b, `,"decision":`...)
		b = append(b, e.Decision...)
	}
	b = append(b, `,"payload":`...)
	if len(e.Payload) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Payload...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string as encoding/json writes it:
// quotes, backslashes and control characters escaped, <, >, & and the line
// separators U+2028/U+2029 escaped too, invalid UTF-8 replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
