// Package ingest turns one hook payload into the envelope hookwatch stores,
// the same way whichever way the payload came: read by the hook process
// (cmd/hookwatch-hook, `hookwatch hook`), posted by a "type": "http" hook to
// the collector (POST /v1/hooks/claude), or already wrapped by a hook and
// posted or spooled as an envelope (POST /v1/events, the spool drain).
//
// A Pipeline does, in this order: decode the payload leniently (package
// event), start the policies' answer (Decide, injected: the hook asks the
// collector or the full binary, the collector evaluates in process), read
// the subagent's sidecar (which Agent call spawned it) or, on a fork's
// SessionStart, the parent its transcript was copied from, apply the privacy
// rules (package privacy), wrap the result in an envelope stamped with the
// pipeline's Origin (host, user, hookwatch version, runtime) and the
// policies' audit record, apply the same rules to the envelope's own text
// (privacy.Envelope: the sidecar's description, the audit record, …), and
// hand it to Deliver (injected: the spool or an HTTP post in the hook, the
// collector's writer in the collector).
//
// Because every envelope is made here, an envelope carries the same fields
// whichever path it took, and what the session model derives from them —
// lineage above all, which groups sessions by host, user and project — does
// not depend on the path.
//
// The lean hook binary links this package: it must stay free of heavy
// dependencies and of work at init (see cmd/hookwatch-hook/depaware.txt).
package ingest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/jsonscan"
	"github.com/hookwatch/hookwatch/internal/jsonstr"
	"github.com/hookwatch/hookwatch/privacy"
)

// Origin is where a pipeline's envelopes come from; it is stamped on each.
type Origin struct {
	// Host and User name the machine and the account the agent runs on.
	// Lineage links only sessions of the same host, user and project, so
	// every path must fill them alike: see LocalOrigin.
	Host, User string
	// Version is the hookwatch version that made the envelope.
	Version string
	// Runtime forces the agent runtime (event.RuntimeClaudeCode,
	// event.RuntimeCodex); "" detects it from each payload.
	Runtime string
}

// LocalOrigin returns the origin of payloads read on this machine by this
// process: the host name ($HOOKWATCH_HOST, else the system's), the user
// (localUser) and version. The hook and the collector's
// http hooks from its own machine both stamp it; HOOKWATCH_HOST is what
// Claude Code's http handlers send a remote collector (claudecode.HostHeader),
// so that both kinds of hook name the machine alike.
func LocalOrigin(version string) Origin {
	host := os.Getenv(claudecode.HostEnv)
	if host == "" {
		host, _ = os.Hostname()
	}
	return Origin{Host: host, User: localUser(), Version: version}
}

// localUser names the user this process runs as: $USER, else $LOGNAME,
// else the name the password database gives its uid, else the uid. The
// environment comes first: it is what the user's shell says, and costs
// the hook no file read; a container or a service often sets neither,
// and a number would name nobody on a team's dashboard.
func localUser() string {
	if u := cmp.Or(os.Getenv("USER"), os.Getenv("LOGNAME")); u != "" {
		return u
	}
	uid := strconv.Itoa(os.Getuid())
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
		return u.Username
	}
	return uid
}

// runtimeOf names the runtime that sent p: the forced one, else Codex when
// the transcript is a Codex rollout, else Claude Code.
func (o Origin) runtimeOf(p *event.Payload) string {
	if o.Runtime != "" {
		return o.Runtime
	}
	return event.DetectRuntime(p.TranscriptPath)
}

// Verdict is what the policies answered for one event.
type Verdict struct {
	// Stdout and Code are the hook's answer: what to print and the exit
	// code (an http hook answers with Stdout as its response body).
	Stdout []byte
	Code   int
	// Audit is the decision's audit record, kept in the envelope.
	Audit json.RawMessage
	// Recorded reports that whoever answered also recorded the event (the
	// full binary, run for this one event): the pipeline then delivers
	// nothing, or the event would be stored twice.
	Recorded bool
}

// Decide starts the policies' answer to one event and returns the function
// that waits for it. The pipeline builds the envelope in between, so an
// answer computed elsewhere (the collector, on the hook's socket) costs the
// agent the longer of the two, not their sum. An error from wait means the
// event passes unanswered (observe-only, fail-open); it is reported in
// Outcome.DecideErr. Decide is not called for statusLine snapshots, which
// answer nothing.
type Decide func(ctx context.Context, p *event.Payload, data []byte) (wait func() (Verdict, error))

// Deliver hands a finished envelope on. The envelope is the pipeline's
// until Deliver returns.
type Deliver func(ctx context.Context, env *event.Envelope) error

// Pipeline turns hook payloads into envelopes and delivers them. The zero
// Privacy redacts nothing: use privacy.DefaultOptions or
// privacy.OptionsFromEnv.
type Pipeline struct {
	Origin  Origin
	Privacy privacy.Options
	// Decide answers the policies; nil observes only.
	Decide Decide
	// Deliver takes each envelope; nil drops it (for tests of the envelope).
	Deliver Deliver
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Traceparent is the trace context the agent ran the hook in (its
	// TRACEPARENT variable), kept in the envelope when well formed.
	Traceparent string
	// ArchiveDir, when not "", is where a hook's PreCompact copies the
	// transcript it compacts and PostCompact its summary (see archive.go);
	// ArchiveMaxBytes caps one copy (0: DefaultArchiveMaxBytes).
	ArchiveDir      string
	ArchiveMaxBytes int64
	// RecordFiles has a PostToolUse of a tool that reads or writes a file
	// record that file's state on the envelope (Envelope.Files), for the
	// stale-context guard (package stale). Only where the file is: the
	// hook, or the collector's http hooks from its own machine.
	RecordFiles bool
	// Remote says the payloads come from another machine (the collector's
	// http hooks from a remote client): the paths they name are that
	// machine's, so none of the client's files is read here — no subagent
	// sidecar, no fork's parent from the transcripts, no Codex rollout's
	// exit code — lest a remote sender read this machine's files through
	// them.
	Remote bool
}

// Outcome is what Run did with one payload.
type Outcome struct {
	// Payload is the decoded payload, after the privacy rules.
	Payload *event.Payload
	// Envelope is what was handed to Deliver; nil when Verdict.Recorded.
	Envelope *event.Envelope
	// Verdict is the policies' answer (zero when none applied).
	Verdict Verdict
	// DecideErr is why the policies could not answer, if they could not.
	DecideErr error
	// Oddities say what is off about a payload that was read anyway.
	Oddities []string
}

// ErrPayload marks a payload Run cannot read: not one JSON object.
var ErrPayload = errors.New("not a hook payload")

// largePayloadBytes is the size from which a payload is worth an oddity:
// real ones are a few KiB; tool output is what makes them huge.
const largePayloadBytes = 1 << 20

// Run turns data, one hook payload as the agent sent it, into an envelope
// and delivers it. It fails with an error wrapping ErrPayload when data is
// not a JSON object, and with Deliver's error; the policies' answer is in
// the Outcome either way, since it matters more to the agent than the
// record. Run never modifies data.
func (pl *Pipeline) Run(ctx context.Context, data []byte) (Outcome, error) {
	now := time.Now
	if pl.Now != nil {
		now = pl.Now
	}
	start := now()
	return pl.run(ctx, data, event.NewID(start), start, event.KindHook, nil)
}

// RunRecorded is Run for a payload hookwatch made from an agent's record
// of the past (a transcript line, hookwatch import) rather than from a
// hook: its envelope has kind event.KindTranscript, is received at the
// record's time at, and carries id, which the caller derives from the
// record, so that importing the same record again makes the same envelope
// and the store keeps it once. sub is the subagent's sidecar, which the
// caller reads once per transcript rather than once per record (nil: none).
// Decide is not called: nothing waits for an answer.
func (pl *Pipeline) RunRecorded(ctx context.Context, data []byte, id string, at time.Time, sub *event.SubagentMeta) (Outcome, error) {
	return pl.run(ctx, data, id, at, event.KindTranscript, sub)
}

func (pl *Pipeline) run(ctx context.Context, data []byte, id string, start time.Time, kind string, sub *event.SubagentMeta) (Outcome, error) {
	p, err := event.Decode(data)
	if err != nil {
		return Outcome{}, fmt.Errorf("cannot read hook payload (%d bytes): %w: %w", len(data), ErrPayload, err)
	}
	out := Outcome{Payload: p, Oddities: oddities(p, len(data))}
	env := &event.Envelope{
		ID:               id,
		Runtime:          pl.Origin.runtimeOf(p),
		Kind:             kind,
		ReceivedAt:       start.UTC(),
		Host:             pl.Origin.Host,
		User:             pl.Origin.User,
		HookwatchVersion: pl.Origin.Version,
		Subagent:         sub,
	}
	if kind == event.KindHook && !pl.Remote {
		env.Subagent, env.ForkOf = ReadSubagentMeta(p), forkOf(p, env.Runtime)
	}
	if env.Runtime == event.RuntimeCodex && !pl.Remote {
		env.ExitCode = exitCode(p)
	}

	if event.ValidTraceparent(pl.Traceparent) {
		env.Traceparent = pl.Traceparent
	}
	var wait func() (Verdict, error)
	if kind != event.KindHook {
		// A record of the past: nothing to answer.
	} else if p.Name() == event.StatusLine {
		env.Kind = event.KindStatusLine // a snapshot, not an event to answer
	} else if pl.Decide != nil {
		wait = pl.Decide(ctx, p, data)
	}
	// While the policies are evaluated elsewhere: the compaction archive
	// (PreCompact and PostCompact only), the state of the file a tool read
	// or wrote (PostToolUse) and the record's payload.
	if kind == event.KindHook {
		if err := pl.archive(p, start); err != nil {
			out.Oddities = append(out.Oddities, err.Error())
		}
		env.Files = pl.fileStates(p)
	}
	// A key that repeats is re-encoded from Raw, which holds its last
	// value, the one the rules saw: the earlier ones, in data alone, would
	// otherwise be stored as they came, unredacted and uncut.
	if env.Payload, err = payloadJSON(p.Raw, data, privacy.Apply(p.Raw, pl.Privacy) || p.InvalidUTF8 || p.RepeatedKeys); err != nil {
		return out, fmt.Errorf("cannot encode payload: %w", err)
	}
	if wait != nil {
		out.Verdict, out.DecideErr = wait()
		if out.Verdict.Recorded {
			return out, nil
		}
		env.Decision = out.Verdict.Audit
	}
	privacy.Envelope(env, pl.Privacy)
	out.Envelope = env
	if pl.Deliver != nil {
		if err := pl.Deliver(ctx, env); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Admit applies the pipeline's privacy rules to the payload of an envelope
// wrapped elsewhere — by a hook's pipeline (which may run other rules), an
// older hook, a script, an import — and to the envelope's own text
// (privacy.Envelope: the sidecar's description, the decision, host, user
// …), so that what is stored obeys the rules of whoever stores it, whatever
// the path. The rules are idempotent: on a payload they already shaped
// Admit changes no byte. A payload whose top-level key repeats is encoded
// again from the last value of each, the one the rules and every reader
// see. A payload that is not a JSON object is left as it is, for the store
// to refuse.
//
// It returns the payload as decoded, which is event.Decode of env.Payload as
// it now is, so that later readers in the same process (the store's indexed
// fields, the session model) need not decode it again; nil when the payload
// is not a JSON object. The rules need only the payload's members: the typed
// views are built once, of the members as stored, and share their bytes
// (event.FromMembers, event.FromObjectShared).
//
// The payload stored and its members, and the decision, are bytes of their
// own, not of the buffer env.Payload and env.Decision may share with other
// envelopes (a request body holding a batch): what keeps them (the session
// model keeps them for as long as it keeps the session's group) keeps the
// envelope's own bytes alone, not the whole batch, nor the tool output the
// rules cut from it.
func (pl *Pipeline) Admit(env *event.Envelope) *event.Payload {
	return pl.admit(env, nil, true)
}

// AdmitSplit is Admit for a reader of the payload's typed views alone (the
// collector, whose store and model read nothing else), given the payload
// split as the caller read it. ms, when not nil, are the members of
// env.Payload, a JSON object it validated and found nested at most
// event.MaxDepth deep, as event.SplitMembers gives them of env.Payload alone
// (event.Envelope.UnmarshalScannedSplit), and AdmitSplit may change them;
// nil, or a payload that is not valid UTF-8, is split here, as Admit splits
// it. What it stores is what Admit stores; the payload it returns is
// Admit's without its map of members (event.Payload.DropRaw), which is
// not made.
func (pl *Pipeline) AdmitSplit(env *event.Envelope, ms event.Members) *event.Payload {
	if !utf8.Valid(env.Payload) {
		ms = nil
	}
	return pl.admit(env, ms, false)
}

// admit is Admit, of the members split when not nil, with the payload's map
// of members when withRaw, else without (AdmitSplit).
func (pl *Pipeline) admit(env *event.Envelope, split event.Members, withRaw bool) *event.Payload {
	if env.Decision != nil {
		env.Decision = bytes.Clone(env.Decision)
	}
	privacy.Envelope(env, pl.Privacy)
	// The rules go through the members in order, and the map is made once,
	// of the members as stored, if at all: neither the rules nor the copy
	// of the payload walk or change a map. A payload whose key holds a
	// secret or repeats, or that needs compacting, goes the way of a map
	// (admitObject), rare enough to be split again.
	ms, invalidUTF8 := split, false
	if ms == nil {
		var buf [16]event.Member
		var err error
		if ms, invalidUTF8, err = event.SplitMembers(env.Payload, buf[:0]); err != nil {
			return nil
		}
	}
	changed, ok := privacy.ApplyMembers(ms, pl.Privacy)
	if !ok {
		return pl.admitObject(env, withRaw)
	}
	var b []byte
	if changed || invalidUTF8 {
		b = encodeMemberList(ms)
	} else {
		data := jsonscan.TrimBlank(env.Payload)
		if hasLineBreak(data) {
			return pl.admitObject(env, withRaw)
		}
		b = ownBytes(ms, data)
	}
	if !withRaw {
		p, ok := event.ViewsOf(ms)
		if !ok {
			return pl.admitObject(env, withRaw)
		}
		env.Payload = b
		return p
	}
	raw := ms.Object()
	if len(raw) != len(ms) {
		return pl.admitObject(env, withRaw)
	}
	env.Payload = b
	return event.FromMembers(raw, ms)
}

// admitObject is admit's rules and copy of env's payload through the map of
// its members, for the payloads admit leaves to it.
func (pl *Pipeline) admitObject(env *event.Envelope, withRaw bool) *event.Payload {
	p := pl.admitMap(env)
	if p != nil && !withRaw {
		p.DropRaw()
	}
	return p
}

// admitMap is admitObject with the map.
func (pl *Pipeline) admitMap(env *event.Envelope) *event.Payload {
	var buf [16]event.Member
	ms, invalidUTF8, err := event.SplitMembers(env.Payload, buf[:0])
	if err != nil {
		return nil
	}
	raw := ms.Object()
	// A key that repeats is encoded again, as in the hook (Pipeline.run):
	// the map holds its last value alone, which is all the rules see.
	if privacy.Apply(raw, pl.Privacy) || invalidUTF8 || len(raw) != len(ms) {
		env.Payload = encodeMembers(raw)
		return event.FromObjectShared(raw)
	}
	b, err := payloadJSON(raw, env.Payload, false)
	if err != nil {
		return nil
	}
	compacted := len(b) != len(jsonscan.TrimBlank(env.Payload))
	if compacted { // raw's values are not b's: rare enough to decode again
		env.Payload = b
		p, err := event.Decode(b)
		if err != nil {
			return nil
		}
		return p
	}
	env.Payload = viaMembers(raw, func(ms event.Members) []byte { return ownBytes(ms, b) })
	return event.FromObjectShared(raw)
}

// hasLineBreak reports whether data holds a line break, which a payload
// stored on a spool's line must not.
func hasLineBreak(data []byte) bool {
	return bytes.IndexByte(data, '\n') >= 0 || bytes.IndexByte(data, '\r') >= 0
}

// ownBytes returns a copy of data, the payload ms was split from, with
// ms's values pointed at their bytes in the copy. A value is a slice of
// data (event.SplitMembers keeps the members' bytes), at data's capacity
// less its own from the start; one that is not (it does not start there)
// is left as it is, which costs memory, not correctness.
func ownBytes(ms event.Members, data []byte) []byte {
	c := bytes.Clone(data)
	for i, m := range ms {
		v := m.Value
		off := cap(data) - cap(v)
		if len(v) == 0 || off < 0 || off+len(v) > len(data) || &data[off] != &v[0] {
			continue
		}
		ms[i].Value = c[off : off+len(v) : off+len(v)]
	}
	return c
}

// oddities says what is off about a payload that decoded: each is worth a
// line in the hook's log, none is a reason to drop the event.
func oddities(p *event.Payload, size int) []string {
	var odd []string
	switch name := p.Name(); {
	case name == "":
		odd = append(odd, "no hook_event_name")
	case p.Event == nil:
		odd = append(odd, "unknown event "+strconv.Quote(name))
	}
	if p.InvalidUTF8 {
		odd = append(odd, "invalid UTF-8 replaced with U+FFFD")
	}
	if p.RepeatedKeys {
		odd = append(odd, "a repeated key, the last of each kept")
	}
	if size > largePayloadBytes {
		odd = append(odd, fmt.Sprintf("large payload of %d bytes", size))
	}
	if len(p.Mistyped) > 0 {
		odd = append(odd, "fields of unexpected type: "+strings.Join(p.Mistyped, ", "))
	}
	return odd
}

// payloadJSON returns the payload to record: the bytes the agent sent when
// nothing was redacted or cut (most events) — valid, since Decode parsed
// them, and compacted onto one line for the spool — else raw re-encoded
// (reencode: the rules changed it, or it held invalid UTF-8). Either way one
// encoding, so that applying the rules again to what it returns gives the
// same bytes.
func payloadJSON(raw event.Object, data []byte, reencode bool) (json.RawMessage, error) {
	if reencode {
		return encodeMembers(raw), nil
	}
	data = jsonscan.TrimBlank(data)
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		return data, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encodeMembers is encodeMemberList of raw's members, raw's values then
// pointed at their bytes in the result.
func encodeMembers(raw event.Object) []byte { return viaMembers(raw, encodeMemberList) }

// viaMembers returns what f makes of raw's members, and points raw's values
// at the bytes f left the members' values at (ownBytes, encodeMemberList).
func viaMembers(raw event.Object, f func(event.Members) []byte) []byte {
	ms := make(event.Members, 0, len(raw))
	for k, v := range raw {
		ms = append(ms, event.Member{Key: k, Value: v})
	}
	b := f(ms)
	for _, m := range ms {
		raw[m.Key] = m.Value
	}
	return b
}

// encodeMemberList encodes the members of a payload, each key once, as one
// JSON object, keys sorted, each value as it is but compacted onto one line
// (the spool is a line per envelope; a line break in valid JSON can only be
// a blank between tokens). It sorts ms and points their values at their
// bytes in the result, so that they are what event.SplitMembers of the
// result would give: the typed views built from them are those of the
// payload as stored. The values must be valid JSON, as event.Split and the
// privacy rules leave them.
func encodeMemberList(ms event.Members) []byte {
	size := 2 // {}
	for i, m := range ms {
		if hasLineBreak(m.Value) {
			var c bytes.Buffer
			if json.Compact(&c, m.Value) == nil {
				ms[i].Value = c.Bytes()
			}
		}
		size += len(ms[i].Value) + 2 // and : and ,
	}
	slices.SortFunc(ms, func(a, b event.Member) int { return strings.Compare(a.Key, b.Key) })
	// The keys quoted one after the other in a buffer on the stack rather
	// than one each (a payload has ten to fifteen members): ends[i] is where
	// ms[i]'s key ends in it.
	var quotedBuf [512]byte
	quoted := quotedBuf[:0]
	var endsBuf [16]int
	ends := endsBuf[:0]
	for _, m := range ms {
		quoted = jsonstr.AppendQuoted(quoted, m.Key)
		ends = append(ends, len(quoted))
	}
	size += len(quoted)
	// Sized exactly, so that no append moves the bytes ms is pointed at.
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		from := 0
		if i > 0 {
			from = ends[i-1]
		}
		b = append(b, quoted[from:ends[i]]...)
		b = append(b, ':')
		at := len(b)
		b = append(b, m.Value...)
		ms[i].Value = b[at:len(b):len(b)]
	}
	return append(b, '}')
}
