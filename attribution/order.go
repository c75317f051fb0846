package attribution

import (
	"bytes"
	"cmp"
	"encoding/json"
	"hash/maphash"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/hookwatch/hookwatch/event"
)

// record is one decoded envelope in the derivation order.
type record struct {
	// item is the item the record was made of, whose envelope's fields
	// and typed payload (p) the record reads.
	*item
	name string // event name
	seq  int    // position in the sorted, deduplicated input
	// session is the session the record counts for: the payload's
	// session_id, or the continued session for a throwaway id.
	session string
	alias   bool // folded in from a throwaway id
	group   string
}

// at is when the record's envelope was received, in UTC (as its item
// keeps it): a method rather than a copy, as a group keeps a record for
// every envelope.
func (r *record) at() time.Time { return r.received }

// compareItems is a total order on envelope content: received_at, id,
// the payload (by its hash: an item does not keep the payload's bytes),
// then every other field, so that envelopes differing in anything compare
// equal only when their payloads' hashes collide, and the choice among
// same-id duplicates does not depend on input order.
func compareItems(x, y *item) int {
	if c := x.received.Compare(y.received); c != 0 {
		return c
	}
	if c := cmp.Compare(x.id, y.id); c != 0 {
		return c
	}
	if c := cmp.Compare(x.sum, y.sum); c != 0 {
		return c
	}
	a, b := x.common, y.common
	ra, rb := x.rareFields(), y.rareFields()
	if c := bytes.Compare(ra.Decision, rb.Decision); c != 0 {
		return c
	}
	for _, c := range [...]int{
		strings.Compare(a.Runtime, b.Runtime),
		strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Host, b.Host),
		strings.Compare(a.User, b.User),
		strings.Compare(a.HookwatchVersion, b.HookwatchVersion),
		strings.Compare(ra.ForkOf, rb.ForkOf),
		strings.Compare(a.Traceparent, b.Traceparent),
	} {
		if c != 0 {
			return c
		}
	}
	if c := slices.CompareFunc(ra.Files, rb.Files, compareFileState); c != 0 {
		return c
	}
	return compareMeta(ra.Subagent, rb.Subagent)
}

func compareFileState(a, b event.FileState) int {
	return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.MtimeNS, b.MtimeNS), cmp.Compare(a.Size, b.Size), strings.Compare(a.Hash, b.Hash))
}

func compareMeta(a, b *event.SubagentMeta) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	if c := strings.Compare(a.ToolUseID, b.ToolUseID); c != 0 {
		return c
	}
	if c := strings.Compare(a.AgentType, b.AgentType); c != 0 {
		return c
	}
	if c := strings.Compare(a.Description, b.Description); c != 0 {
		return c
	}
	return cmp.Compare(a.SpawnDepth, b.SpawnDepth)
}

// item is an envelope with its payload decoded once, when the item is
// made: it keeps the typed views it derives from and the payload's hash
// (sum), not the payload's bytes, which the store keeps. A Group keeps an
// item for every envelope applied, and a payload holds what the views do
// not need (its keys, the output of tools that spawn nothing).
//
// Of its envelope, an item keeps in itself only what changes with every
// envelope (the id, the time received); the fields a client repeats from
// one envelope to the next it shares with the group's other items
// (common), and those almost every envelope leaves empty it keeps apart
// (rare), when it has any. The model's cost per event is partly the memory
// it keeps for the event (each new page a fault, each object one more that
// every collection marks): so kept, an item fits the 160-byte size class,
// where one holding its whole envelope took 352 bytes (TestItemSize).
type item struct {
	id       string    // the envelope's id
	received time.Time // when the envelope was received, in UTC (record.at)
	common   *envCommon
	rare     *envRare // nil when the envelope sets none of them: read rareFields
	p        *event.Payload
	sum      uint64 // the payload's hash (payloadSeed)
	// size is what the item keeps of the payload's bytes (Group.Bytes):
	// a tool event's, those ownTool copied (its envelope's id among
	// them); any other's, the payload's length, which bounds the strings
	// its views hold.
	size    int
	applied bool // a Group derived from it
	// rec is the record newRecord made of the item last: one object per
	// envelope kept rather than two.
	rec record
}

// envCommon is the fields of an envelope that its client repeats from one
// envelope to the next (the trace context, from one event of a call or
// turn to the next): a group keeps one copy of each set (commons), which
// its items share.
type envCommon struct {
	Runtime, Kind, Host, User, HookwatchVersion, Traceparent string
}

// envRare is the fields of an envelope that almost every envelope leaves
// empty (a sidecar, a fork's parent, a rollout's exit code, a file tool's
// file states, a policy decision): an item points to its own only when
// one is set, and holds no room for them otherwise.
type envRare struct {
	Subagent *event.SubagentMeta
	ForkOf   string
	ExitCode *int
	Files    []event.FileState
	Decision json.RawMessage
}

// noRare is the rare fields of an item that has none; nothing changes it.
var noRare envRare

// rareFields returns the item's rare fields, all empty when it has none.
func (it *item) rareFields() *envRare {
	if it.rare == nil {
		return &noRare
	}
	return it.rare
}

// payloadSeed seeds the payloads' hashes: a process's own, so that the
// payloads a sender could make collide cannot be found from outside. Which
// of two same-id envelopes a model keeps may differ from one process to
// the next (the store keeps one of them already), never from one order of
// the same envelopes to another.
var payloadSeed = maphash.MakeSeed()

// newItem makes the item of e: its payload decoded, or p when not nil (a
// payload decoded already, which the item takes, as Group.ApplyDecoded
// does); the strings it keeps are in's copies, and its common fields cs's.
func newItem(e *event.Envelope, p *event.Payload, in strs, cs commons) *item {
	it := &item{
		id: e.ID,
		// In UTC once, for every time derived from it (record.at).
		received: e.ReceivedAt.UTC(),
		common:   cs.of(envCommon{e.Runtime, e.Kind, e.Host, e.User, e.HookwatchVersion, e.Traceparent}),
		sum:      maphash.Bytes(payloadSeed, e.Payload),
		size:     len(e.Payload),
	}
	if e.Subagent != nil || e.ForkOf != "" || e.ExitCode != nil || e.Files != nil || e.Decision != nil {
		it.rare = &envRare{Subagent: e.Subagent, ForkOf: e.ForkOf, ExitCode: e.ExitCode, Files: e.Files, Decision: e.Decision}
	}
	if p == nil {
		p, _ = event.Decode(e.Payload) // nil when not an object: not attributable
	}
	if it.p = kept(p, in); it.p != nil {
		if n, ok := ownTool(it.p, &it.id, in); ok {
			it.size = n
		}
	}
	return it
}

// kept returns what an item keeps of a decoded payload: its typed views
// without its map of members (Raw), which nothing the model derives reads
// once the views are built, and which is the largest part of a decoded
// payload (a map per event, kept for every event of a group); the strings
// its events repeat (the session, its paths, the agent, the prompt) are
// in's copies. Its name is kept in HookEventName, as Name reads a
// statusLine's from Raw. p is the item's own, changed in place.
func kept(p *event.Payload, in strs) *event.Payload {
	if p == nil {
		return nil
	}
	p.HookEventName = p.Name()
	p.Raw = nil
	c := &p.Common
	c.SessionID, c.TranscriptPath, c.CWD = in.of(c.SessionID), in.of(c.TranscriptPath), in.of(c.CWD)
	c.AgentID, c.AgentType.Value, c.PromptID = in.of(c.AgentID), in.of(c.AgentType.Value), in.of(c.PromptID)
	c.Model, c.TurnID, c.ScratchpadDir = in.of(c.Model), in.of(c.TurnID), in.of(c.ScratchpadDir)
	return p
}

// strs holds one copy of each string a group's payloads repeat: a group
// keeps every payload of its sessions decoded, and each decoded its own
// copy of the session id, the paths, the agent id, the prompt id.
type strs map[string]string

// maxStrs bounds a strs: strings past it are kept as they are, so that a
// stream of strings that never repeat costs no more than it did.
const maxStrs = 1 << 14

// own is of for a string that may share a payload's bytes: the table's
// copy is a copy of s, and s itself is copied past maxStrs.
func (in strs) own(s string) string {
	if t, ok := in[s]; ok || s == "" {
		return t
	}
	return in.of(strings.Clone(s))
}

// of returns the table's copy of s, which it becomes when it has none.
func (in strs) of(s string) string {
	if s == "" {
		return s
	}
	if t, ok := in[s]; ok {
		return t
	}
	if len(in) < maxStrs {
		in[s] = s
	}
	return s
}

// commons holds one copy of each envCommon of a group's envelopes, as
// strs does of strings: most envelopes of a group share one or a few.
type commons map[envCommon]*envCommon

// of returns the table's copy of c, which a copy of c becomes when the
// table has none. Past maxStrs sets a copy of c is returned and not kept:
// the table stays bounded when sets never repeat (a trace context of its
// own for every event), and each set past it costs what it would
// unshared.
func (cs commons) of(c envCommon) *envCommon {
	if t, ok := cs[c]; ok {
		return t
	}
	t := new(envCommon) // not &c, which would move c to the heap on every call
	*t = c
	if len(cs) < maxStrs {
		cs[c] = t
	}
	return t
}

// canonicalOrder deduplicates items by envelope id (keeping, among same-id
// envelopes, the least by compareItems; envelopes without an id are
// deduplicated only when wholly identical) and sorts them by received_at,
// then id. The input slice is not modified.
func canonicalOrder(items []*item) []*item {
	byID := make(map[string]*item, len(items))
	out := make([]*item, 0, len(items))
	for _, it := range items {
		if it.id == "" {
			out = append(out, it)
			continue
		}
		if cur, ok := byID[it.id]; !ok || compareItems(it, cur) < 0 {
			byID[it.id] = it
		}
	}
	for _, it := range byID {
		out = append(out, it)
	}
	slices.SortFunc(out, compareItems)
	return slices.CompactFunc(out, func(a, b *item) bool { return compareItems(a, b) == 0 })
}

// decodeAll decodes the payloads of the ordered items. It returns the
// records of attributable envelopes and how many were not.
func decodeAll(items []*item, in strs) ([]*record, int) {
	recs := make([]*record, 0, len(items))
	skipped := 0
	for _, it := range items {
		r := newRecord(it, len(recs), in)
		if r == nil {
			skipped++
			continue
		}
		recs = append(recs, r)
	}
	return recs, skipped
}

// newRecord decodes an item into the record at position seq, or returns nil
// when it cannot be attributed: its payload is not a JSON object, or names
// no session.
func newRecord(it *item, seq int, in strs) *record {
	p := it.p
	if p == nil || p.SessionID == "" {
		return nil
	}
	// The item's record, made again when the group is derived again: by
	// then nothing holds the one it replaces.
	it.rec = record{
		item: it, name: p.Name(), seq: seq, session: p.SessionID,
		group: in.groupKey(it.common.Host, it.common.User, p.TranscriptPath, p.CWD),
	}
	return &it.rec
}

// GroupKey names the sessions lineage can link: those of the same host,
// user and project (Project of the transcript path, else of the cwd).
func GroupKey(host, user, transcriptPath, cwd string) string {
	var buf [128]byte
	return string(AppendGroupKey(buf[:0], host, user, transcriptPath, cwd))
}

// AppendGroupKey appends GroupKey(host, user, transcriptPath, cwd) to dst,
// for a caller that can compare it with a key it holds before making a
// string of it.
func AppendGroupKey(dst []byte, host, user, transcriptPath, cwd string) []byte {
	dst = append(append(dst, host...), 0)
	dst = append(append(dst, user...), 0)
	return append(dst, Project(transcriptPath, cwd)...)
}

// groupKey is in.of(GroupKey(…)) without making the key again when the
// table has it: every record names its group.
func (in strs) groupKey(host, user, transcriptPath, cwd string) string {
	var buf [128]byte
	k := AppendGroupKey(buf[:0], host, user, transcriptPath, cwd)
	if t, ok := in[string(k)]; ok {
		return t
	}
	return in.of(string(k))
}

// ownTool points the views of a tool event (PreToolUse, PostToolUse) at
// bytes of their own: the decoder may have left them in the payload's
// (event.ViewsOf), which a view would keep whole. A PostToolUse keeps its
// tool_response only where the model reads it (keepsResponse). The
// envelope's id, which no other event shares, moves into the same bytes:
// one object kept per event rather than two, each of which every
// collection marks. p and *id are the item's own, changed in place. It
// returns how many bytes the item now owns, and false when p is no tool
// event's.
func ownTool(p *event.Payload, id *string, in strs) (int, bool) {
	var call *event.ToolCall
	var resp *json.RawMessage
	switch e := p.Event.(type) {
	case *event.PreToolUseInput:
		call = &e.ToolCall
	case *event.PostToolUseInput:
		call, resp = &e.ToolCall, &e.ToolResponse
		if !keepsResponse(e) {
			*resp = nil
		}
	default:
		return 0, false
	}
	var r []byte
	if resp != nil {
		r = *resp
	}
	size := len(*id) + len(call.ToolUseID) + len(call.ToolInput) + len(r)
	buf := make([]byte, 0, size)
	buf = append(append(append(append(buf, *id...), call.ToolUseID...), call.ToolInput...), r...)
	call.ToolName = in.own(call.ToolName)
	if n := len(*id); n > 0 {
		*id, buf = unsafe.String(&buf[0], n), buf[n:]
	}
	if n := len(call.ToolUseID); n > 0 {
		call.ToolUseID, buf = unsafe.String(&buf[0], n), buf[n:]
	}
	if n := len(call.ToolInput); call.ToolInput != nil {
		call.ToolInput, buf = buf[:n:n], buf[n:]
	}
	if r != nil {
		*resp = buf
	}
	return size, true
}

// keepsResponse reports whether the model reads a PostToolUse's
// tool_response: a delegation call's names the agent it spawned
// (spawnedAgentID), and a call a subagent's sidecar names as its spawn
// reads from it whether the agent runs on in the background
// (launchedAsync, which finds one of two names in the text). Any other
// output, which may be a whole file, is not kept.
func keepsResponse(e *event.PostToolUseInput) bool {
	r := e.ToolResponse
	return spawnsAgent(e.ToolName) || bytes.Contains(r, []byte("async_launched")) || bytes.Contains(r, []byte("isAsync"))
}
