package event

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
)

// AppendJSON appends the envelope's JSON encoding to b: the document
// json.Marshal produces (without its HTML escaping), without reflection. It
// is the one encoding of an envelope: the hook sends and spools it, and the
// store keeps it (store.FromEnvelope). The hook encodes one envelope per
// process, where encoding/json's first use of a type (building its encoder
// by reflection) costs more than the rest of the hook's work. Strings with
// invalid UTF-8 are written with U+FFFD in its place. e.Payload and
// e.Decision must be valid JSON (as json.Marshal requires); they are copied
// as they are.
func (e *Envelope) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.AppendQuoted(b, e.ID)
	b = append(b, `,"runtime":`...)
	b = jsonstr.AppendQuoted(b, e.Runtime)
	if e.Kind != "" {
		b = append(b, `,"kind":`...)
		b = jsonstr.AppendQuoted(b, e.Kind)
	}
	b = append(b, `,"received_at":"`...)
	b = e.ReceivedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if e.Host != "" {
		b = append(b, `,"host":`...)
		b = jsonstr.AppendQuoted(b, e.Host)
	}
	if e.User != "" {
		b = append(b, `,"user":`...)
		b = jsonstr.AppendQuoted(b, e.User)
	}
	if e.HookwatchVersion != "" {
		b = append(b, `,"hookwatch_version":`...)
		b = jsonstr.AppendQuoted(b, e.HookwatchVersion)
	}
	if m := e.Subagent; m != nil {
		b = append(b, `,"subagent":{"agentType":`...)
		b = jsonstr.AppendQuoted(b, m.AgentType)
		if m.Description != "" {
			b = append(b, `,"description":`...)
			b = jsonstr.AppendQuoted(b, m.Description)
		}
		b = append(b, `,"toolUseId":`...)
		b = jsonstr.AppendQuoted(b, m.ToolUseID)
		b = append(b, `,"spawnDepth":`...)
		b = strconv.AppendInt(b, int64(m.SpawnDepth), 10)
		b = append(b, '}')
	}
	if e.ForkOf != "" {
		b = append(b, `,"fork_of":`...)
		b = jsonstr.AppendQuoted(b, e.ForkOf)
	}
	if e.ExitCode != nil {
		b = append(b, `,"exit_code":`...)
		b = strconv.AppendInt(b, int64(*e.ExitCode), 10)
	}
	if len(e.Files) > 0 {
		b = append(b, `,"files":`...)
		b = AppendFileStates(b, e.Files, jsonstr.AppendQuoted)
	}
	if e.Traceparent != "" {
		b = append(b, `,"traceparent":`...)
		b = jsonstr.AppendQuoted(b, e.Traceparent)
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

// plainEnvelope is Envelope without its UnmarshalJSON: what encoding/json
// makes of it by reflection.
type plainEnvelope Envelope

// UnmarshalJSON decodes an envelope exactly as encoding/json decodes the
// struct by reflection, which it falls back to for anything but the shape
// every producer writes (each field once, spelled as tagged, strings where
// strings belong, no null): a collector decodes every envelope it ingests
// or reads back, and the reflection cost more than the rest of reading one.
// Like encoding/json, it sets only the fields data holds.
func (e *Envelope) UnmarshalJSON(data []byte) error {
	if out, ok := e.unmarshalCommon(data, true); ok {
		*e = out
		return nil
	}
	return json.Unmarshal(data, (*plainEnvelope)(e))
}

// UnmarshalShared is UnmarshalJSON, except that Payload and Decision may
// be slices of data rather than copies: for a caller that keeps data, and
// does not change it, as long as it keeps the envelope (a batch decoded
// from a body read whole holds the body once, not also a copy of it).
func (e *Envelope) UnmarshalShared(data []byte) error {
	if out, ok := e.unmarshalCommon(data, false); ok {
		*e = out
		return nil
	}
	return json.Unmarshal(data, (*plainEnvelope)(e))
}

// repeatedStrings holds the recent values of the fields that repeat from
// one envelope to the next: those of the envelope that say where it comes
// from, the same on every envelope of a client, and those of the payload
// every event carries (Common: a session's id, transcript and directory, a
// turn's prompt, an agent). A collector keeps the envelopes and payloads of
// the sessions it models, and the same value decoded anew for each would be
// an object of its own for the garbage collector to allocate and mark.
var repeatedStrings jsonscan.Interned

// UnmarshalScanned is UnmarshalShared of the envelope whose BeginObject
// token s returned last, read in place: it consumes the envelope's text and
// returns the index after it. ok is false, and e left as it was, when the
// text is not valid JSON or not of the shape UnmarshalJSON decodes without
// encoding/json; the caller then decodes the text otherwise
// (UnmarshalShared). A batch read whole is scanned once this way, not once
// to find each envelope and again to decode it.
func (e *Envelope) UnmarshalScanned(s *jsonscan.Scanner) (end int, ok bool) {
	d := envelopeDecoder{out: *e, ok: true}
	end, valid := s.Members(d.member)
	if !valid || !d.ok {
		return end, false
	}
	*e = d.out
	return end, true
}

// UnmarshalScannedSplit is UnmarshalScanned, which also appends to ms the
// members of the envelope's payload when it is an object, as SplitMembers
// gives them of Payload alone (each value a slice of Payload, at Payload's
// capacity less its offset), and reports so in split: a batch read whole is
// scanned once for its envelopes and their payloads' members, not again for
// each payload. The payload is valid JSON (the scan validated it) but may
// hold invalid UTF-8 and nest deeper than MaxDepth, which SplitMembers
// refuses or replaces: the caller checks both. When not ok, or not split,
// ms is returned as it was given.
func (e *Envelope) UnmarshalScannedSplit(s *jsonscan.Scanner, ms Members) (end int, out Members, split, ok bool) {
	d := envelopeDecoder{out: *e, ok: true}
	// ms[n0:] are the members of the latest payload read, ms[next:] those
	// of the payload being read (hostile text may repeat the key).
	n0, next := len(ms), len(ms)
	member := func(key, val []byte) {
		if val[0] == '{' && string(key) == `"payload"` {
			// A payload given again replaces the one before, as the
			// envelope's Payload is the last one given.
			ms = append(ms[:n0], ms[next:]...)
			next = len(ms)
			// The members' values are slices of the scan's whole text:
			// made slices of the payload's, as SplitMembers of it makes them.
			for i := n0; i < len(ms); i++ {
				v := ms[i].Value
				off := cap(val) - cap(v)
				ms[i].Value = val[off : off+len(v) : len(val)]
			}
		}
		d.member(key, val)
	}
	end, valid := s.MembersIn(member, `"payload"`, func(key, val []byte) {
		ms = append(ms, Member{memberKey(jsonscan.Name(key)), val})
	})
	if !valid || !d.ok {
		return end, ms[:n0], false, false
	}
	*e = d.out
	if len(e.Payload) == 0 || e.Payload[0] != '{' {
		return end, ms[:n0], false, true
	}
	return end, ms, true, true
}

// unmarshalCommon is UnmarshalJSON's fast path; false sends data to
// encoding/json. copyRaw copies Payload and Decision out of data.
func (e *Envelope) unmarshalCommon(data []byte, copyRaw bool) (Envelope, bool) {
	d := envelopeDecoder{out: *e, ok: true, copyRaw: copyRaw}
	_, valid := jsonscan.Members(data, d.member)
	return d.out, d.ok && valid
}

// envelopeDecoder is UnmarshalJSON's fast path, member by member: out is
// the envelope decoded so far, ok false once a member is not of the common
// shape; copyRaw copies Payload and Decision out of the text.
type envelopeDecoder struct {
	out     Envelope
	ok      bool
	copyRaw bool
	seen    uint16 // the fields given so far, a bit each
}

func (d *envelopeDecoder) member(key, val []byte) {
	out, ok, copyRaw := &d.out, d.ok, d.copyRaw
	if !ok {
		return
	}
	var bit uint16
	var str *string
	repeats := false // a value every envelope of a client repeats
	switch string(key) {
	case `"id"`:
		bit, str = 1<<0, &out.ID
	case `"runtime"`:
		bit, str, repeats = 1<<1, &out.Runtime, true
	case `"kind"`:
		bit, str, repeats = 1<<2, &out.Kind, true
	case `"host"`:
		bit, str, repeats = 1<<3, &out.Host, true
	case `"user"`:
		bit, str, repeats = 1<<4, &out.User, true
	case `"hookwatch_version"`:
		bit, str, repeats = 1<<5, &out.HookwatchVersion, true
	case `"fork_of"`:
		bit, str = 1<<6, &out.ForkOf
	case `"traceparent"`:
		bit, str = 1<<12, &out.Traceparent
	case `"received_at"`:
		bit = 1 << 7
		ok = val[0] == '"' && out.ReceivedAt.UnmarshalJSON(val) == nil
	case `"payload"`, `"decision"`:
		bit = 1 << 8
		if key[1] == 'd' {
			bit = 1 << 9
		}
		raw := json.RawMessage(val[:len(val):len(val)]) // an append copies
		if copyRaw {
			raw = append([]byte(nil), val...) // encoding/json copies too
		}
		if bit == 1<<8 {
			out.Payload = raw
		} else {
			out.Decision = raw
		}
		ok = val[0] != 'n' // null: let encoding/json say what it makes of it
	case `"exit_code"`:
		bit = 1 << 11
		n, err := strconv.Atoi(string(val))    // refuses what encoding/json refuses for an int
		ok = err == nil && out.ExitCode == nil // it would write into one already there
		out.ExitCode = &n
	case `"subagent"`:
		bit = 1 << 10
		var m SubagentMeta // encoding/json would decode into one already there
		ok = out.Subagent == nil && val[0] == '{' && json.Unmarshal(val, &m) == nil
		out.Subagent = &m
	case `"files"`:
		bit = 1 << 13
		// Rare (a file tool's PostToolUse) and small: reflection is
		// cheap enough here.
		var fs []FileState
		ok = out.Files == nil && val[0] == '[' && json.Unmarshal(val, &fs) == nil
		out.Files = fs
	default:
		ok = false // another field, or one spelled otherwise, which encoding/json may match
	}
	switch {
	case repeats:
		*str, ok = repeatedStrings.Unquote(val)
	case str != nil:
		*str, ok = jsonscan.Unquote(val)
	}
	if d.seen&bit != 0 {
		ok = false // the merge rules of a field given twice are encoding/json's
	}
	d.seen |= bit
	d.ok = ok
}

// AppendFileStates appends fs as a JSON array of FileState objects, each
// string written by quote: jsonstr.AppendQuoted in an envelope,
// jsonstr.AppendQuotedHTML where the bytes must be encoding/json's (the
// session model's call documents).
func AppendFileStates(b []byte, fs []FileState, quote func([]byte, string) []byte) []byte {
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b = quote(b, f.Path)
		b = append(b, `,"mtime_ns":`...)
		b = strconv.AppendInt(b, f.MtimeNS, 10)
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, f.Size, 10)
		if f.Hash != "" {
			b = append(b, `,"hash":`...)
			b = quote(b, f.Hash)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}
