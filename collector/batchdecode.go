package collector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// DecodeBatch reads the body of POST /v1/events, {"envelopes":[…]}, where
// each element is an event.Envelope. Unknown top-level keys are ignored. An
// element that is not an envelope fails with a *BatchError naming it; an
// error of r is returned as it is (wrapped); any other error describes what
// is wrong with the body. It only parses: envelopes are validated by
// Ingest.
//
// The body is read whole and scanned once (jsonscan); the envelopes'
// payloads are slices of it, so a batch is held once, as its text. A body
// the scan does not take as it is — invalid, or any shape but the common
// one — is decoded again by encoding/json's streaming decoder, whose
// answer (the envelopes or the error) is the contract: the scan is only a
// faster way to the same envelopes.
func DecodeBatch(r io.Reader) ([]event.Envelope, error) {
	rr := &recordingReader{r: r}
	data, _ := io.ReadAll(rr)
	if rr.err != nil {
		return nil, fmt.Errorf("cannot read the body: %w", rr.err)
	}
	return decodeBatchBytes(data)
}

// decodeBatchBytes is DecodeBatch of a body already read.
func decodeBatchBytes(data []byte) ([]event.Envelope, error) {
	sp := newSplitPayloads()
	defer sp.release()
	return decodeBatchSplit(data, sp)
}

// decodeBatchSplit is decodeBatchBytes, which also puts in sp the members
// of the payloads it split as it scanned the body (splitPayloads.of), for
// admission (ingest.Pipeline.AdmitSplit). sp is reset first.
func decodeBatchSplit(data []byte, sp *splitPayloads) ([]event.Envelope, error) {
	sp.members, sp.spans = sp.members[:0], sp.spans[:0]
	if envs, ok := scanBatch(data, sp); ok {
		return envs, nil
	}
	sp.members, sp.spans = sp.members[:0], sp.spans[:0]
	return decodeBatch(json.NewDecoder(&spaceCapReader{r: bytes.NewReader(data)}))
}

// splitPayloads are the members of a batch's payloads, split as the batch
// was scanned: spans[i] says where envelope i's are in members.
type splitPayloads struct {
	members event.Members
	spans   []memberSpan
}

type memberSpan struct {
	from, to int
	split    bool // false: the payload was not split (not an object, or too deep)
}

// of returns the members of envelope i's payload, and false when it was
// not split (then the payload is split again by whoever reads it).
func (sp *splitPayloads) of(i int) (event.Members, bool) {
	if sp == nil || i >= len(sp.spans) || !sp.spans[i].split {
		return nil, false
	}
	m := sp.spans[i]
	return sp.members[m.from:m.to:m.to], true
}

// scratchSplits holds splitPayloads for reuse: a batch's members are read
// by admission and then dropped.
var scratchSplits = sync.Pool{New: func() any { return new(splitPayloads) }}

// maxScratchMembers bounds the members a kept splitPayloads holds room for.
const maxScratchMembers = 16 * maxScratchEnvelopes

func newSplitPayloads() *splitPayloads { return scratchSplits.Get().(*splitPayloads) }

// release hands sp back for reuse; the members it held must not be used
// again.
func (sp *splitPayloads) release() {
	clear(sp.members) // they point into the body
	if cap(sp.members) > maxScratchMembers || cap(sp.spans) > maxScratchEnvelopes {
		return
	}
	sp.members, sp.spans = sp.members[:0], sp.spans[:0]
	scratchSplits.Put(sp)
}

// scanBatch is DecodeBatch's fast path: false when data is not a valid
// batch of the common shape (one "envelopes" key, unescaped, an array of
// objects each of which decodes), left to decodeBatch to decode or
// describe. It reads data once, each envelope decoded as the scanner
// reaches it (Envelope.UnmarshalScanned), rather than finding the array,
// then each envelope in it, then decoding each: three passes over every
// payload.
func scanBatch(data []byte, sp *splitPayloads) ([]event.Envelope, bool) {
	s := jsonscan.NewScanner(data)
	if s.Next().Kind != jsonscan.BeginObject {
		return nil, false
	}
	var envs []event.Envelope
	found := false
	for {
		k := s.Next()
		switch k.Kind {
		case jsonscan.EndObject:
			return envs, found && s.Next().Kind == jsonscan.End
		case jsonscan.Key:
		default:
			return nil, false
		}
		v := s.Next()
		if string(data[k.Start:k.End]) != `"envelopes"` {
			// Another key is ignored, unless it may be "envelopes"
			// spelled with escapes.
			if _, ok := s.Skip(v); !ok || k.Escaped {
				return nil, false
			}
			continue
		}
		if found || v.Kind != jsonscan.BeginArray {
			return nil, false // the last one counts, or null, or not an array: rare
		}
		found = true
		var ok bool
		if envs, ok = scanEnvelopes(&s, sp); !ok {
			return nil, false
		}
		if s.MaxDepthSeen() > event.MaxDepth {
			// A payload may nest deeper than admission takes: let it
			// split them again, and refuse what it refuses.
			for i := range sp.spans {
				sp.spans[i].split = false
			}
		}
	}
}

// scanEnvelopes decodes the elements of the array of envelopes whose
// BeginArray token s returned last, and consumes it.
//
// They are decoded into a buffer kept from one batch to the next and
// copied out at their number, which is known only at the end: the slice
// is made once, at its size, without a pass over the body to guess it
// nor growth by doubling (a batch of 17 would allocate room for 32).
func scanEnvelopes(s *jsonscan.Scanner, sp *splitPayloads) ([]event.Envelope, bool) {
	buf := scratchEnvelopes.Get().(*[]event.Envelope)
	envs := (*buf)[:0]
	defer func() {
		clear(envs) // the envelopes point into the body
		if cap(envs) <= maxScratchEnvelopes {
			*buf = envs[:0]
			scratchEnvelopes.Put(buf)
		}
	}()
	for {
		e := s.Next()
		if e.Kind == jsonscan.EndArray {
			return append([]event.Envelope{}, envs...), true
		}
		if e.Kind != jsonscan.BeginObject {
			return nil, false
		}
		envs = append(envs, event.Envelope{})
		n := len(envs)
		if !scanEnvelope(s, &envs[n-1], sp) {
			return nil, false
		}
		if n > 1 {
			shareStrings(&envs[n-1], &envs[n-2])
		}
	}
}

// scanEnvelope decodes into env the envelope whose BeginObject s returned
// last, consumes it, and puts its payload's members in sp.
func scanEnvelope(s *jsonscan.Scanner, env *event.Envelope, sp *splitPayloads) bool {
	from := len(sp.members)
	_, members, split, ok := env.UnmarshalScannedSplit(s, sp.members)
	if !ok {
		return false
	}
	sp.members = members
	sp.spans = append(sp.spans, memberSpan{from: from, to: len(members), split: split})
	return true
}

// scratchEnvelopes holds scanEnvelopes' buffers, of at most
// maxScratchEnvelopes envelopes: a larger batch's is left to the garbage
// collector rather than kept.
var scratchEnvelopes = sync.Pool{New: func() any { return new([]event.Envelope) }}

const maxScratchEnvelopes = 1024

// shareStrings points the fields of e that say where it comes from at
// prev's strings when they are equal: the envelopes of a batch come from
// one host, user, client and hook, and the session model keeps every
// envelope of the sessions it holds, each string an object for the garbage
// collector to mark.
func shareStrings(e, prev *event.Envelope) {
	if e.Runtime == prev.Runtime {
		e.Runtime = prev.Runtime
	}
	if e.Host == prev.Host {
		e.Host = prev.Host
	}
	if e.User == prev.User {
		e.User = prev.User
	}
	if e.HookwatchVersion == prev.HookwatchVersion {
		e.HookwatchVersion = prev.HookwatchVersion
	}
	if e.Kind == prev.Kind {
		e.Kind = prev.Kind
	}
}

func decodeBatch(dec *json.Decoder) ([]event.Envelope, error) {
	malformed := func(err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("malformed JSON: unexpected end of the body at byte %d", dec.InputOffset())
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("malformed JSON at byte %d: %v", dec.InputOffset(), se)
		}
		return fmt.Errorf("malformed JSON: %v", err)
	}
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, errors.New(`empty body: want {"envelopes":[…]}`)
	}
	if err != nil {
		return nil, malformed(err)
	}
	if tok != json.Delim('{') {
		return nil, errors.New(`body is not a JSON object: want {"envelopes":[…]}`)
	}
	var envs []event.Envelope
	found := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		if key != "envelopes" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, malformed(err)
			}
			continue
		}
		// As with json.Unmarshal, the last "envelopes" counts.
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		if tok == nil {
			found, envs = false, nil
			continue
		}
		if tok != json.Delim('[') {
			return nil, errors.New(`"envelopes" is not an array`)
		}
		found, envs = true, envs[:0]
		for i := 0; dec.More(); i++ {
			// A pointer tells null from an object; a JSON value of another
			// type is a type error without a field.
			var env *event.Envelope
			err := dec.Decode(&env)
			var te *json.UnmarshalTypeError
			switch {
			case err == nil && env == nil, errors.As(err, &te) && te.Field == "":
				return nil, &BatchError{Index: i, Err: errors.New("not a JSON object")}
			case errors.As(err, &te), errors.As(err, new(*time.ParseError)):
				return nil, &BatchError{Index: i, Err: describeJSONError(err)}
			case err != nil:
				return nil, malformed(err)
			}
			envs = append(envs, *env)
		}
		if _, err := dec.Token(); err != nil { // ]
			return nil, malformed(err)
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return nil, malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("malformed JSON at byte %d: data after the batch", dec.InputOffset())
	}
	if !found {
		return nil, errors.New(`missing "envelopes": want {"envelopes":[…]}`)
	}
	if envs == nil {
		envs = []event.Envelope{}
	}
	return envs, nil
}

// describeJSONError rewrites encoding/json's type errors in terms of the
// envelope's fields.
func describeJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s: want a %s, got a JSON %s", te.Field, te.Type, te.Value)
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("received_at: not an RFC 3339 time: %q", pe.Value)
	}
	return err
}

// recordingReader keeps the first error of r other than io.EOF: the JSON
// decoder reports it as a syntax error or an unexpected end, which would
// turn "too large" or "busy" into "malformed".
type recordingReader struct {
	r   io.Reader
	err error
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// maxSpaceRun is the longest run of whitespace between JSON tokens that
// spaceCapReader passes on.
const maxSpaceRun = 64

// spaceCapReader shortens runs of whitespace between JSON tokens to
// maxSpaceRun bytes. json.Decoder rescans the whole of a run each time it
// reads more of it, which makes megabytes of whitespace (a body of
// '{"envelopes":[' and spaces) cost minutes of CPU. Whitespace between
// tokens means nothing, and a shortened run still separates them; runs in
// real batches (indentation) are shorter and pass whole, so the offsets in
// error messages stay exact for them.
type spaceCapReader struct {
	r        io.Reader
	inString bool // inside a JSON string, where spaces are content
	escaped  bool // the previous byte in the string was a backslash
	run      int  // length of the current run of whitespace
}

func (s *spaceCapReader) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		out := 0
		// keep moves p[from:to] to p[out:]: nothing to move until a run
		// has been shortened.
		keep := func(from, to int) {
			if out != from {
				copy(p[out:], p[from:to])
			}
			out += to - from
		}
		for i := 0; i < n; {
			if s.inString {
				if s.escaped {
					s.escaped = false
					keep(i, i+1)
					i++
					continue
				}
				// Most of a body is string content: jump to the next byte
				// that matters there.
				end := bytes.IndexByte(p[i:n], '"')
				if end < 0 {
					end = n - i
				}
				if b := bytes.IndexByte(p[i:i+end], '\\'); b >= 0 {
					end = b
				}
				j := i + end
				if j == n {
					keep(i, n)
					break
				}
				if p[j] == '\\' {
					s.escaped = true
				} else {
					s.inString = false
				}
				keep(i, j+1)
				i = j + 1
				continue
			}
			switch c := p[i]; c {
			case ' ', '\t', '\n', '\r':
				s.run++
				if s.run > maxSpaceRun {
					i++
					continue
				}
			default:
				s.run = 0
				s.inString = c == '"'
			}
			keep(i, i+1)
			i++
		}
		if out > 0 || err != nil || n == 0 {
			return out, err
		}
	}
}
