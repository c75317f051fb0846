package collector

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// FuzzDecodeBatch feeds arbitrary bodies to the batch decoder and the
// validation behind it: they must never panic, a BatchError must name an
// envelope of the batch, and what passes must be storable. Once admitted,
// an envelope stored from the payload admission decoded is the one stored
// from its bytes.
func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`{"envelopes":[]}`))
	f.Add([]byte(`{"envelopes":[{"id":"0196f0a0-0000-7000-8000-000000000001","runtime":"claude-code","kind":"hook","received_at":"2026-11-21T15:00:00Z","payload":{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","agent_type":""}}]}`))
	f.Add([]byte(`{"envelopes":[{"id":"x","payload":{"a":"\xff"}},{"id":7}]}`))
	f.Add([]byte(`{"envelopes":[{"id":"x","received_at":"nope","payload":{}}]}`))
	f.Add([]byte(`{"envelopes":[{"id":"x","subagent":{"agentType":"Explore","spawnDepth":"deep"},"decision":{"x":1},"payload":{"cost":{}}}]}`))
	f.Add([]byte(`[{"envelopes":1}]`))
	f.Add([]byte(`{"envelopes":[null,[],"",1.5e999]}`))
	if b, err := os.ReadFile("../testdata/payloads/claude-code-2.1.197.jsonl"); err == nil && len(b) > 600 {
		f.Add([]byte(`{"envelopes":[{"id":"a","payload":` + string(b[:bytesToNewline(b)]) + `}]}`))
	}
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		// The scan is only a faster way to what encoding/json decodes.
		if fast, ok := scanBatch(body, new(splitPayloads)); ok {
			slow, err := decodeBatch(json.NewDecoder(bytes.NewReader(body)))
			if err != nil || !reflect.DeepEqual(fast, slow) {
				t.Fatalf("the scan decoded %+v, encoding/json %+v (%v)", fast, slow, err)
			}
		}
		envs, err := DecodeBatch(bytes.NewReader(body))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		events, err := toEvents(envs, nil, now)
		if err != nil {
			var be *BatchError
			if !errors.As(err, &be) || be.Index < 0 || be.Index >= len(envs) {
				t.Fatalf("validation error %v does not name an envelope of %d", err, len(envs))
			}
			return
		}
		for _, e := range events {
			if !json.Valid(e.Envelope) || store.ValidateID(e.ID) != nil || e.Time.IsZero() {
				t.Fatalf("accepted an unstorable event %+v", e)
			}
		}
		pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
		decoded := make([]*event.Payload, len(envs))
		for i := range envs {
			decoded[i] = pl.Admit(&envs[i])
		}
		fromBytes, err := toEvents(envs, nil, now)
		if err != nil {
			t.Fatalf("an admitted batch is refused: %v", err)
		}
		fromDecoded, err := toEvents(envs, decoded, now)
		if err != nil {
			t.Fatalf("an admitted batch is refused from its decoded payloads: %v", err)
		}
		for i := range fromBytes {
			if d := decoded[i]; d != nil {
				// The stored envelope, as the model reads it: FromEnvelope's
				// decoding, else (it could not tell: a string of the
				// envelope was not UTF-8) the stored JSON decoded.
				stored, err := store.EnvelopeOf(&fromBytes[i])
				if err != nil {
					t.Fatalf("envelope %d: the stored envelope does not decode: %v", i, err)
				}
				if want, err := event.Decode(stored.Payload); err != nil || !reflect.DeepEqual(d, want) {
					t.Fatalf("envelope %d: admission decoded %+v, the stored payload decodes to %+v (%v)", i, d, want, err)
				}
			}
			fromBytes[i].Payload, fromDecoded[i].Payload = nil, nil
			if !reflect.DeepEqual(fromBytes[i], fromDecoded[i]) {
				t.Fatalf("envelope %d: stored from its bytes\n%+v\nfrom its decoded payload\n%+v", i, fromBytes[i], fromDecoded[i])
			}
		}
	})
}

func bytesToNewline(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return len(b)
}

// FuzzSpaceCapReader holds spaceCapReader, read in pieces of any size, to
// the rule it implements, byte by byte over the whole input: runs of
// blanks outside strings are cut to maxSpaceRun, nothing else changes.
func FuzzSpaceCapReader(f *testing.F) {
	f.Add([]byte(`{"a": "x  \"  y\\"   ,  "b"   :1}`), uint8(3))
	f.Add([]byte(strings.Repeat(" ", 200)+`"`+strings.Repeat(" ", 200)+`\`), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, piece uint8) {
		var want []byte
		inString, escaped, run := false, false, 0
		for _, c := range in {
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
				}
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				run++
				if run > maxSpaceRun {
					continue
				}
			default:
				run = 0
				inString = c == '"'
			}
			want = append(want, c)
		}
		r := &spaceCapReader{r: &pieceReader{b: in, n: int(piece)%17 + 1}}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %q (%v), want %q", got, err, want)
		}
	})
}

// pieceReader reads b at most n bytes at a time.
type pieceReader struct {
	b []byte
	n int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}

// FuzzScanSplit: the members of the payloads the batch's scan splits are
// those event.SplitMembers gives of each payload alone, and admitting an
// envelope from them (AdmitSplit) stores and decodes what Admit does (but
// for the map of members it leaves out), in bytes of its own: overwriting
// the body afterwards changes nothing.
func FuzzScanSplit(f *testing.F) {
	f.Add([]byte(`{"envelopes":[{"id":"a","payload":{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}},{"id":"b","payload":{}}]}`))
	f.Add([]byte(`{"envelopes":[{"id":"x","payload":{"a":"\xff","a":{"b":[1]}}},{"id":"y","payload":[1]}]}`))
	f.Add([]byte(`{"envelopes":[{"payload":{"hook_event_name":"PostToolUse","tool_response":{"stdout":"ghp_aB3dE6gH9jaB3dE6gH9jaB3dE6gH9jkLmNoP"}},"id":"z"}]}`))
	// A payload given twice: the envelope's is the last, and so are its members.
	f.Add([]byte(`{"envelopes":[{"id":"r","payload":{"a":1,"b":{"c":2}},"payload":{"d":"3"}},{"id":"s","payload":{"e":4},"payload":5}]}`))
	f.Add([]byte(`{"envelopes":[{"payload":{"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}]}`))
	if b, err := os.ReadFile("../testdata/payloads/claude-code-2.1.197.jsonl"); err == nil && len(b) > 600 {
		f.Add([]byte(`{"envelopes":[{"id":"a","payload":` + string(b[:bytesToNewline(b)]) + `}]}`))
	}
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkScanSplit(t, &pl, body)
	})
}

// checkScanSplit fails when the payloads of body the scan splits are not
// split as event.SplitMembers splits them, or are admitted otherwise than
// by Admit. It returns how many it split.
func checkScanSplit(t *testing.T, pl *ingest.Pipeline, body []byte) (split int) {
	t.Helper()
	sp := newSplitPayloads()
	defer sp.release()
	envs, err := decodeBatchSplit(body, sp)
	if err != nil {
		return 0
	}
	type admitted struct {
		payload []byte
		decoded *event.Payload
	}
	var got []admitted
	for i, env := range envs {
		ms, ok := sp.of(i)
		if !ok {
			continue
		}
		want, invalidUTF8, err := event.SplitMembers(env.Payload, nil)
		if err == nil && !invalidUTF8 {
			if len(ms) != len(want) {
				t.Fatalf("envelope %d: the scan split %d members, SplitMembers %d", i, len(ms), len(want))
			}
			for j, m := range ms {
				if m.Key != want[j].Key || !bytes.Equal(m.Value, want[j].Value) {
					t.Fatalf("envelope %d: the scan split %q: %s, SplitMembers %q: %s", i, m.Key, m.Value, want[j].Key, want[j].Value)
				}
				if off := cap(env.Payload) - cap(m.Value); off < 0 || off+len(m.Value) > len(env.Payload) || &env.Payload[off] != &m.Value[0] {
					t.Fatalf("envelope %d: member %q is not a slice of the payload at its offset", i, m.Key)
				}
			}
		}
		a, da := admitAlike(t, pl, i, env, ms)
		got = append(got, admitted{a.Payload, da})
		if da != nil {
			if d, err := event.Decode(bytes.Clone(a.Payload)); err != nil || !reflect.DeepEqual(withoutRaw(d), da) {
				t.Fatalf("envelope %d: AdmitSplit decoded %+v, Decode of what it stored %+v (%v)", i, da, d, err)
			}
		}
	}
	stored := make([]string, len(got))
	for i, g := range got {
		stored[i] = string(g.payload)
	}
	for i := range body {
		body[i] = ' '
	}
	for i, g := range got {
		if string(g.payload) != stored[i] {
			t.Fatalf("an admitted payload shares the body: %q, was %q", g.payload, stored[i])
		}
		if g.decoded != nil {
			if d, err := event.Decode([]byte(stored[i])); err != nil || !reflect.DeepEqual(withoutRaw(d), g.decoded) {
				t.Fatalf("an admitted payload's decoding shares the body: %+v", g.decoded)
			}
		}
	}
	return len(got)
}

// withoutRaw is p without its map of members (event.Payload.DropRaw).
func withoutRaw(p *event.Payload) *event.Payload {
	if p != nil {
		p.DropRaw()
	}
	return p
}

// TestScanSplit: every batch of the model benchmark's session, of one
// envelope of each real payload and of payloads the scan does not split
// (too deep, invalid UTF-8, not an object) holds to FuzzScanSplit.
func TestScanSplit(t *testing.T) {
	pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
	n := 0
	for _, body := range modelBenchBodies(&testing.B{}, 2_000, 16) {
		n += checkScanSplit(t, &pl, body)
	}
	if n < 2_000 {
		t.Fatalf("the scan split %d of the 2,000 payloads of the model benchmark", n)
	}
	for i, p := range storetest.Corpus(t) {
		env := storetest.Envelope(p.Runtime, storetest.At(i), p.JSON)
		b, err := json.Marshal(map[string]any{"envelopes": []event.Envelope{env}})
		if err != nil {
			t.Fatal(err)
		}
		checkScanSplit(t, &pl, b)
	}
	for _, p := range []string{`{"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, "{\"a\":\"\xff\"}", `[1]`, `{}`, `{"a":1,"a":2}`} {
		body := []byte(`{"envelopes":[{"id":"a","payload":` + p + `}]}`)
		if n := checkScanSplit(t, &pl, body); n != 0 && p[0] == '[' {
			t.Fatalf("the scan split %s", p)
		}
	}
}

// FuzzDecodeSpooled holds the spool's decoder to what each record decoded
// alone gives (decodeEach, the way it replaced): the same
// envelopes of the same records, in order, and the same records refused,
// whichever way the pass was decoded. The fuzzer's text is split into
// records at its line breaks, and only those the spool would hand over
// (valid JSON) are kept.
func FuzzDecodeSpooled(f *testing.F) {
	var lines []string
	for i, p := range storetest.Corpus(f) {
		b, err := json.Marshal(storetest.Envelope(p.Runtime, storetest.At(i), p.JSON))
		if err != nil {
			f.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	for i := 0; i+3 <= len(lines); i += 3 {
		f.Add(strings.Join(lines[i:i+3], "\n"))
	}
	f.Add(lines[0] + "\n" + `{"id":5}` + "\n" + lines[1])
	f.Add(lines[0] + "\n" + `[1,2]` + "\n" + `"x"`)
	f.Add(`{"id":"a","payload":{"a":1,"a":2}}` + "\n" + `{"id":"b","payload":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`)
	f.Fuzz(func(t *testing.T, text string) {
		var recs [][]byte
		for _, l := range strings.Split(text, "\n") {
			if _, ok := jsonscan.Valid([]byte(l)); ok {
				recs = append(recs, []byte(l))
			}
		}
		want, wantRaw, wantBad := decodeEach(recs)
		split := newSplitPayloads()
		defer split.release()
		envs, raw, bad := decodeSpooled(recs, split)
		if !reflect.DeepEqual(envs, want) && !(len(envs) == 0 && len(want) == 0) {
			t.Fatalf("decoded %+v, each record alone %+v", envs, want)
		}
		if !slices.EqualFunc(raw, wantRaw, bytes.Equal) || !slices.EqualFunc(bad, wantBad, bytes.Equal) {
			t.Fatalf("records %q and refused %q, each alone %q and %q", raw, bad, wantRaw, wantBad)
		}
		// What the pass split is what admission would split: the
		// payloads are admitted alike either way.
		pl := ingest.Pipeline{Privacy: privacy.DefaultOptions()}
		for i := range envs {
			if ms, ok := split.of(i); ok {
				admitAlike(t, &pl, i, envs[i], ms)
			}
		}
	})
}

// TestDecodeSpooled: the hooks' envelopes of the real clients are decoded
// in one scan of the pass, each payload split as it goes, and a record that
// is not an envelope costs the pass that scan, not an envelope.
func TestDecodeSpooled(t *testing.T) {
	var recs [][]byte
	for i, p := range storetest.Corpus(t) {
		b, err := json.Marshal(storetest.Envelope(p.Runtime, storetest.At(i), p.JSON))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, b)
	}
	split := newSplitPayloads()
	defer split.release()
	envs, raw, bad := decodeSpooled(recs, split)
	if len(envs) != len(recs) || len(raw) != len(recs) || len(bad) != 0 {
		t.Fatalf("%d records: %d envelopes, %d refused", len(recs), len(envs), len(bad))
	}
	for i := range envs {
		if _, ok := split.of(i); !ok && len(envs[i].Payload) > 0 && envs[i].Payload[0] == '{' {
			t.Errorf("record %d: its payload was not split as the pass was scanned", i)
		}
	}
	garbage := []byte(`{"id":5}`)
	mixed := append([][]byte{garbage}, recs...)
	envs, raw, bad = decodeSpooled(mixed, split)
	if len(envs) != len(recs) || !bytes.Equal(raw[0], recs[0]) || len(bad) != 1 || !bytes.Equal(bad[0], garbage) {
		t.Fatalf("with a record that is no envelope: %d envelopes of %d, refused %q", len(envs), len(recs), bad)
	}
}

// admitAlike admits envelope i of a batch, env, with the members ms its
// scan split, and on its own, and fails t unless both store the same
// payload and decode it alike; it returns what the first admitted.
func admitAlike(t *testing.T, pl *ingest.Pipeline, i int, env event.Envelope, ms event.Members) (event.Envelope, *event.Payload) {
	t.Helper()
	a, b := env, env
	da := pl.AdmitSplit(&a, slices.Clone(ms))
	db := pl.Admit(&b)
	if db != nil {
		db.DropRaw()
	}
	if !bytes.Equal(a.Payload, b.Payload) || !reflect.DeepEqual(da, db) {
		t.Fatalf("envelope %d: AdmitSplit stored %s (%+v), Admit %s (%+v)", i, a.Payload, da, b.Payload, db)
	}
	return a, da
}

// FuzzSessionListEntry holds the session list's entry written by hand
// (appendListed) to what encoding/json writes of the same stored row
// (view), for any stored summary: the rows of a database anyone with its
// password can write, whose titles and runs hold what hook payloads
// carried. appendListed either writes encoding/json's bytes or refuses,
// leaving the entry to encoding/json; the page is JSON either way, and
// what the hand writes is bounded by what it copies. Seeds: the summaries
// derived from every capture, and malformed ones.
func FuzzSessionListEntry(f *testing.F) {
	envs := make([]event.Envelope, 0, 512)
	for i, p := range storetest.Corpus(f) {
		envs = append(envs, storetest.Envelope(p.Runtime, storetest.At(i), p.JSON))
	}
	for _, s := range attribution.Build(envs).Sessions {
		sum, err := json.Marshal(s.Summary())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(sum, s.SessionID, s.CWD, s.TranscriptPath, false)
	}
	// Malformed rows: each a well-formed summary but for one defect.
	at := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	good, err := json.Marshal(&attribution.Session{SessionID: "s", Title: "t", StartedAt: at, LastEventAt: at, Status: attribution.SessionEnded,
		Runs: []attribution.Run{{Source: "startup", StartedAt: at}}, Counts: attribution.Counts{Prompts: 1}})
	if err != nil {
		f.Fatal(err)
	}
	ok := string(good)
	edit := func(old, new string) string {
		if !strings.Contains(ok, old) {
			f.Fatalf("%s is not in %s", old, ok)
		}
		return strings.Replace(ok, old, new, 1)
	}
	end := func(members string) string { return ok[:len(ok)-1] + "," + members + "}" }
	for _, sum := range []string{
		ok,
		ok[:len(ok)-9],                        // truncated
		end(`"status":"failed"`),              // a duplicate key, the last wins
		end(`"Status":"failed"`),              // a key encoding/json matches without regard to case
		end(`"st\u0061tus":"failed"`),         // an escaped key
		end(`"counts":{"tool_calls":2}`),      // a duplicate object, merged
		end(`"cwd":7`),                        // a value of the wrong type where the list does not look
		end(`"unknown":{"x":[1,{"y":null}]}`), // a member no field takes
		edit(`"title":"t"`, `"title":"<a> & \u003c \u2028 \u2029 \ud800 \u0000 \/"`), // escapes
		edit(`"title":"t"`, "\"title\":\"\xff\xfe <b>\u2028\x00\""),                  // invalid UTF-8, a raw U+2028, a NUL
		edit(`"title":"t"`, `"title":{"x":"t"}`),                                     // junk where a string is expected
		edit(`"ended_at":null`, `"ended_at":"2026-11-21T15:00:00.000+01:00"`),
		edit(`"ended_at":null`, `"ended_at":""`),
		edit(`"source":"startup"`, `"source":"startup","junk":1`),
		edit(`"source":"startup"`, `"source":{"x":[1]}`),
		edit(`"prompts":1`, `"prompts":1e400`),
		edit(`"prompts":1`, `"prompts":99999999999999999999999`),
		edit(`"prompts":1`, `"prompts":1.0`),
		edit(`"prompts":1`, ` "prompts" : 1 `),
		edit(`"runs":[`, `"runs":[{},`),
		edit(`"status":"ended"`, `"status":7`),
		`{}`, `[1,2]`, `null`, ``,
	} {
		f.Add([]byte(sum), "s", "/work/a & <b>", "", false)
		f.Add([]byte(sum), "s", "/work/p", "", true)
	}
	f.Fuzz(func(t *testing.T, sum []byte, id, cwd, transcript string, alias bool) {
		r := listed{
			sess: store.Session{ID: id, Runtime: event.RuntimeClaudeCode, CWD: cwd, TranscriptPath: transcript, Host: "h<", User: "u&",
				FirstEventAt: at, LastEventAt: at.Add(time.Second), EventCount: 3, LastSeq: 9},
			own: store.SessionModel{SessionID: id, Version: attribution.ModelVersion, Summary: sum, Seq: 9, UpdatedSeq: 4},
		}
		if alias {
			r.own.Summary, r.own.AliasOf = nil, "target"
			r.target = store.SessionModel{SessionID: "target", Version: attribution.ModelVersion, Summary: sum, Seq: 7, UpdatedSeq: 5}
		}
		want, err := newViewEncoder().encode(view(r.sess, r.own, r.target))
		if err != nil {
			t.Fatalf("encoding/json refuses the view: %v", err)
		}
		const prefix = `{"sessions":[`
		got, ok := appendListed([]byte(prefix), r)
		if !bytes.HasPrefix(got, []byte(prefix)) {
			t.Fatalf("appendListed wrote over what precedes the entry: %q", got)
		}
		if ok {
			entry := got[len(prefix):]
			if !bytes.Equal(entry, want) {
				t.Fatalf("stored summary %q\nby hand:\n%s\nencoding/json:\n%s", sum, entry, want)
			}
			// What the hand writes is the summary's parts, the stored
			// session's strings escaped (at most 6 bytes a byte) and a
			// constant frame.
			if limit := len(sum) + 6*(2*len(id)+len(cwd)+len(transcript)+4) + 2048; len(entry) > limit {
				t.Fatalf("an entry of %d bytes from a summary of %d", len(entry), len(sum))
			}
		}
		page, err := appendSessionsPage(nil, []listed{r, r}, "c<")
		if err != nil {
			t.Fatal(err)
		}
		var wantPage bytes.Buffer
		enc := json.NewEncoder(&wantPage)
		enc.SetEscapeHTML(false)
		v := view(r.sess, r.own, r.target)
		if err := enc.Encode(SessionsResponse{Sessions: []SessionView{v, v}, NextCursor: "c<"}); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(page) || !bytes.Equal(page, wantPage.Bytes()) {
			t.Fatalf("stored summary %q\npage:\n%s\nencoding/json:\n%s", sum, page, wantPage.Bytes())
		}
	})
}
