package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"github.com/hookwatch/hookwatch/store"
)

// The session list writes its pages by hand: at a team server's size (pages
// of 1,000 sessions), decoding every stored summary into an
// attribution.Session and encoding the views again by reflection was most
// of a page's CPU, to copy parts of the summary (runs, counts, tools …)
// into the answer unchanged. So a page takes those parts of the summary as
// they are stored, reads the few strings it derives from (status, project,
// the last run's source) with jsonscan, and writes each view byte for byte
// as writeJSON writes view's SessionView. What that cannot hold to is left
// to view and encoding/json, session by session: a summary not as
// json.Marshal writes one among them (summaryCanon), as a row of the
// database is not vouched for; FuzzSessionListEntry holds any stored row
// to that. A field added to SessionView is written here too:
// TestSessionListBytes fails until it is.

// listed is a session of a page of the list, with the models its view is
// made of (view's sess, sm and target).
type listed struct {
	sess        store.Session
	own, target store.SessionModel
}

// listedModels adds the model to a page of sessions, without waiting for
// events not applied yet: each session's own, and for a throwaway id, the
// model of the session it was folded into.
func (s *Server) listedModels(ctx context.Context, sessions []store.Session) ([]listed, error) {
	ids := make([]string, len(sessions))
	for i, sess := range sessions {
		ids[i] = sess.ID
	}
	ms, err := s.store.SessionModels(ctx, ids)
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, m := range ms {
		if _, ok := ms[m.AliasOf]; m.AliasOf != "" && !ok {
			targets = append(targets, m.AliasOf)
		}
	}
	if len(targets) > 0 {
		more, err := s.store.SessionModels(ctx, targets)
		if err != nil {
			return nil, err
		}
		for id, m := range more {
			ms[id] = m
		}
	}
	out := make([]listed, len(sessions))
	for i, sess := range sessions {
		m := ms[sess.ID]
		if sess, err = s.sessionAsOf(ctx, sess, m); err != nil {
			return nil, err
		}
		out[i] = listed{sess: sess, own: m, target: ms[m.AliasOf]}
	}
	return out, nil
}

// appendSessionsPage appends to b the body of GET /v1/sessions: byte for
// byte what writeJSON writes of SessionsResponse{Sessions: the views (view)
// of rows, NextCursor: next}, its final newline included. The error is
// encoding/json's, for a view it refuses.
func appendSessionsPage(b []byte, rows []listed, next string) ([]byte, error) {
	var enc *viewEncoder
	b = append(b, `{"sessions":[`...)
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		start := len(b)
		var ok bool
		if b, ok = appendListed(b, r); ok {
			continue
		}
		if enc == nil {
			enc = newViewEncoder()
		}
		doc, err := enc.encode(view(r.sess, r.own, r.target))
		if err != nil {
			return b[:start], err
		}
		b = append(b[:start], doc...)
	}
	b = append(b, `],"next_cursor":`...)
	b = jsonstr.AppendQuotedNoHTML(b, next)
	return append(b, "}\n"...), nil
}

// pageSize is about the length of the page appendSessionsPage writes of
// rows, for its buffer: a page of 1,000 sessions is megabytes, which a
// buffer grown from nothing copies over and over.
func pageSize(rows []listed) int {
	n := 64
	for _, r := range rows {
		// What a view holds besides the summary's parts it shows: the
		// stored session's fields, the project's names, the seqs.
		n += 512 + len(r.sess.CWD) + len(r.sess.TranscriptPath)
		if r.own.AliasOf == "" {
			n += len(r.own.Summary)
		}
	}
	return n
}

// viewEncoder encodes SessionViews as writeJSON does, for the views
// appendListed leaves to encoding/json.
type viewEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newViewEncoder() *viewEncoder {
	e := &viewEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false) // as writeJSON
	return e
}

// encode returns v's JSON, valid until the next call.
func (e *viewEncoder) encode(v SessionView) ([]byte, error) {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(e.buf.Bytes(), []byte{'\n'}), nil
}

// listedSummary is what the list shows of a stored summary
// (attribution.Session's JSON): each member as the summary holds it, nil
// when absent.
type listedSummary struct {
	status, project, title, model, permissionMode, endedAt, endReason, effort, resume []byte
	parent, lineage, children, aliases, phantom, runs, compactions, counts            []byte
	usage, turns, shape, tools                                                        []byte
}

// read takes the members of sum, and reports whether the view made of
// them can be written from them as they are: sum is what json.Marshal
// writes of an attribution.Session, but for the strings the list decodes
// and writes again or does not show (summaryCanon), and what is copied is
// what an Encoder that does not escape HTML writes of what it decodes to.
func (f *listedSummary) read(sum []byte) bool {
	if !summaryCanon(sum, listCopied) {
		return false
	}
	_, ok := jsonscan.Members(sum, func(key, val []byte) {
		switch string(key) {
		case `"status"`:
			f.status = val
		case `"project"`:
			f.project = val
		case `"title"`:
			f.title = val
		case `"model"`:
			f.model = val
		case `"permission_mode"`:
			f.permissionMode = val
		case `"ended_at"`:
			f.endedAt = val
		case `"end_reason"`:
			f.endReason = val
		case `"effort"`:
			f.effort = val
		case `"resume"`:
			f.resume = val
		case `"parent_session_id"`:
			f.parent = val
		case `"lineage"`:
			f.lineage = val
		case `"child_session_ids"`:
			f.children = val
		case `"alias_session_ids"`:
			f.aliases = val
		case `"phantom"`:
			f.phantom = val
		case `"runs"`:
			f.runs = val
		case `"compactions"`:
			f.compactions = val
		case `"counts"`:
			f.counts = val
		case `"usage"`:
			f.usage = val
		case `"turns"`:
			f.turns = val
		case `"shape"`:
			f.shape = val
		case `"tools"`:
			f.tools = val
		}
	})
	if !ok {
		return false
	}
	// The strings written again are strings: a null decodes to "" as
	// none does, but is not what Marshal writes.
	for _, s := range [...][]byte{f.status, f.project, f.title, f.model, f.permissionMode, f.endReason, f.effort, f.parent, f.lineage} {
		if s != nil && s[0] != '"' {
			return false
		}
	}
	return true
}

// appendListed appends the view of r (view) as writeJSON writes it, and
// reports whether it could: false, having appended part of it, for a
// summary of another attribution.ModelVersion (its members may differ from
// what this one decodes and encodes again) or one listedSummary.read
// refuses, or for a time encoding/json does not write as AppendFormat.
func appendListed(b []byte, r listed) ([]byte, bool) {
	sum, version, alias := r.own.Summary, r.own.Version, r.own.AliasOf != ""
	if alias {
		sum, version = r.target.Summary, r.target.Version
	}
	var f listedSummary
	if len(sum) > 0 && (version != attribution.ModelVersion || !f.read(sum)) {
		return b, false
	}
	source, ok := lastRunSource(f.runs)
	if !ok {
		return b, false
	}
	if alias {
		// A throwaway id shows the state of the session it was folded
		// into, not that session's history (view).
		f.title, f.parent, f.lineage, f.children, f.aliases, f.phantom = nil, nil, nil, nil, nil, nil
		f.runs, f.compactions, f.counts, f.usage, f.turns, f.shape, f.tools = nil, nil, nil, nil, nil, nil, nil
	}
	project, ok := decodedString(f.project)
	if !ok {
		return b, false
	}
	sess := r.sess
	project = listedProject(project, sess)

	b = append(b, `{"id":`...)
	b = jsonstr.AppendQuotedNoHTML(b, sess.ID)
	b = jsonstr.AppendQuotedNoHTML(append(b, `,"runtime":`...), sess.Runtime)
	b = jsonstr.AppendQuotedNoHTML(append(b, `,"cwd":`...), sess.CWD)
	b = jsonstr.AppendQuotedNoHTML(append(b, `,"transcript_path":`...), sess.TranscriptPath)
	b = jsonstr.AppendQuotedNoHTML(append(b, `,"host":`...), sess.Host)
	b = jsonstr.AppendQuotedNoHTML(append(b, `,"user":`...), sess.User)
	if b, ok = appendUTCTime(append(b, `,"first_event_at":`...), sess.FirstEventAt); !ok {
		return b, false
	}
	if b, ok = appendUTCTime(append(b, `,"last_event_at":`...), sess.LastEventAt); !ok {
		return b, false
	}
	b = strconv.AppendInt(append(b, `,"event_count":`...), sess.EventCount, 10)
	b = strconv.AppendInt(append(b, `,"last_seq":`...), sess.LastSeq, 10)

	b = appendStored(append(b, `,"title":`...), f.title, "")
	b = appendStored(append(b, `,"model":`...), f.model, "")
	b = appendStored(append(b, `,"permission_mode":`...), f.permissionMode, "")
	b = jsonstr.AppendQuotedNoHTML(append(b, `,"source":`...), source)
	b = appendRaw(append(b, `,"ended_at":`...), f.endedAt, "null")
	b = appendStored(append(b, `,"end_reason":`...), f.endReason, "")
	b = jsonstr.AppendQuotedNoHTML(append(b, `,"project":`...), project)
	b = jsonstr.AppendQuotedNoHTML(append(b, `,"project_name":`...), claudecode.ProjectName(project, sess.CWD))
	b = appendStored(append(b, `,"status":`...), f.status, attribution.SessionRunning)
	if !emptyString(f.effort) {
		b = appendStored(append(b, `,"effort":`...), f.effort, "")
	}
	if !null(f.resume) {
		b = append(append(b, `,"resume":`...), f.resume...)
	}
	b = appendStored(append(b, `,"parent_session_id":`...), f.parent, "")
	b = appendStored(append(b, `,"lineage":`...), f.lineage, "")
	b = appendRaw(append(b, `,"child_session_ids":`...), f.children, "[]")
	b = appendRaw(append(b, `,"alias_session_ids":`...), f.aliases, "[]")
	if r.own.AliasOf != "" {
		b = jsonstr.AppendQuotedNoHTML(append(b, `,"alias_of":`...), r.own.AliasOf)
	}
	if string(f.phantom) == "true" {
		b = append(b, `,"phantom":true`...)
	}
	if event.IsProbe(sess.ID) {
		b = append(b, `,"probe":true`...)
	}
	b = appendRaw(append(b, `,"runs":`...), f.runs, "[]")
	b = appendRaw(append(b, `,"compactions":`...), f.compactions, "[]")
	b = appendRaw(append(b, `,"counts":`...), f.counts, string(zeroCounts()))
	if !null(f.usage) {
		b = append(append(b, `,"usage":`...), f.usage...)
	}
	if !emptyArray(f.turns) {
		b = append(append(b, `,"turns":`...), f.turns...)
	}
	if !null(f.shape) {
		b = append(append(b, `,"shape":`...), f.shape...)
	}
	if !emptyArray(f.tools) {
		b = append(append(b, `,"tools":`...), f.tools...)
	}
	b = strconv.AppendInt(append(b, `,"derived_seq":`...), r.own.Seq, 10)
	b = strconv.AppendInt(append(b, `,"model_seq":`...), max(r.own.UpdatedSeq, r.target.UpdatedSeq), 10)
	return append(b, '}'), true
}

// zeroCounts is the JSON of attribution.Counts{}: the counts of a session
// without a summary of its own.
var zeroCounts = sync.OnceValue(func() []byte {
	b, err := json.Marshal(attribution.Counts{})
	if err != nil {
		panic(err) // a struct of ints
	}
	return b
})

// lastRunSource is the source of the last of runs, a summary's (view's
// Source): "" when there is none; ok is false when they do not read as
// attribution.Run objects.
func lastRunSource(runs []byte) (string, bool) {
	if null(runs) {
		return "", true
	}
	var last []byte
	if _, ok := jsonscan.Elements(runs, func(elem []byte) { last = elem }); !ok {
		return "", false
	}
	if last == nil {
		return "", true
	}
	var src []byte
	if _, ok := jsonscan.Members(last, func(key, val []byte) {
		if string(key) == `"source"` {
			src = val
		}
	}); !ok {
		return "", false
	}
	return decodedString(src)
}

// decodedString is the value of a stored string member ("" for none or
// null); ok is false when it is not a string.
func decodedString(raw []byte) (string, bool) {
	if null(raw) {
		return "", true
	}
	return jsonscan.Unquote(raw)
}

// appendStored appends a stored string member as writeJSON writes its
// value: its text as it is when it holds nothing an Encoder that escapes
// HTML writes otherwise (plain ASCII, no escape), else its value encoded
// again; zero, quoted, for none (or an empty one, when zero is not "").
func appendStored(b, raw []byte, zero string) []byte {
	if null(raw) || zero != "" && emptyString(raw) {
		return jsonstr.AppendQuotedNoHTML(b, zero)
	}
	if plainASCII(raw) {
		return append(b, raw...)
	}
	s, _ := jsonscan.Unquote(raw) // read checked it is a string
	return jsonstr.AppendQuotedNoHTML(b, s)
}

// plainASCII reports whether raw holds no backslash and no byte past
// ASCII.
func plainASCII(raw []byte) bool {
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendRaw appends a stored member as it is, or zero for none.
func appendRaw(b, raw []byte, zero string) []byte {
	if null(raw) {
		return append(b, zero...)
	}
	return append(b, raw...)
}

func null(raw []byte) bool        { return raw == nil || string(raw) == "null" }
func emptyString(raw []byte) bool { return null(raw) || string(raw) == `""` }
func emptyArray(raw []byte) bool  { return null(raw) || string(raw) == "[]" }

// appendUTCTime appends t as time.Time's MarshalJSON writes it, for a time
// in UTC of a year it accepts (the store's times); false otherwise.
func appendUTCTime(b []byte, t time.Time) ([]byte, bool) {
	if t.Location() != time.UTC || t.Year() < 0 || t.Year() > 9999 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}
