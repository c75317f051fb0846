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

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
)

// record is one decoded envelope in the derivation order.
type record struct {
	// item is the item the record was made of, whose envelope's fields
	// and typed payload (p) the record reads.
	*item
	seq int // position in the sorted, deduplicated input
	// session is the session the record counts for: the payload's
	// session_id, or the continued session for a throwaway id.
	session string
	alias   bool // folded in from a throwaway id
	group   string
}

// at is when the record's envelope was received, in UTC: a method rather
// than a copy, as a group keeps a record for every envelope.
func (r *record) at() time.Time { return r.received() }

// name is the record's event name: its view's (view.Name), which every
// record of the event shares, rather than a copy in each.
func (r *record) name() string { return r.p.Name() }

// compareItems is a total order on envelope content: received_at, id,
// the payload (by its hash: an item does not keep the payload's bytes),
// then every other field, so that envelopes differing in anything compare
// equal only when their payloads' hashes collide, and the choice among
// same-id duplicates does not depend on input order.
func compareItems(x, y *item) int {
	if c := cmp.Or(cmp.Compare(x.recvSec, y.recvSec), cmp.Compare(x.recvNsec, y.recvNsec)); c != 0 {
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
	id     string // the envelope's id
	common *envCommon
	rare   *envRare // nil when the envelope sets none of them: read rareFields
	p      view     // what the item keeps of its payload; p.Common nil: not an object
	sum    uint64   // the payload's hash (payloadSeed)
	// recvSec and recvNsec are when the envelope was received (received):
	// 12 bytes rather than a time.Time's 24 and its pointer, in every item
	// a group keeps.
	recvSec  int64
	recvNsec int32
	applied  bool // a Group derived from it
	// size is what the item keeps of the payload's bytes (Group.Bytes):
	// a tool event's, those ownTool copied (its envelope's id among
	// them); any other's, the payload's length, which bounds the strings
	// its views hold.
	size int
	// rec is the record newRecord made of the item last: one object per
	// envelope kept rather than two.
	rec record
}

// received returns when the item's envelope was received, in UTC.
func (it *item) received() time.Time { return time.Unix(it.recvSec, int64(it.recvNsec)).UTC() }

// envCommon is the fields of an envelope that its client repeats from one
// envelope to the next (the trace context, from one event of a call or
// turn to the next): a group keeps one copy of each set (tables.envs), which
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

// newItem makes the item of e: of its payload decoded, or of p when not
// nil (a payload decoded already, as Group.ApplyDecoded takes, which the
// item reads and does not keep or change), the view ts.view makes. pre,
// when not nil, finds the tool call a PostToolUse's PreToolUse reported
// (Group.preOf), whose bytes ownTool shares.
func newItem(e *event.Envelope, p *event.Payload, ts *tables, pre func(sessionID, toolUseID string) *event.ToolCall) *item {
	it := &item{
		id:       e.ID,
		recvSec:  e.ReceivedAt.Unix(),
		recvNsec: int32(e.ReceivedAt.Nanosecond()),
		common:   ts.envs.of(envCommon{e.Runtime, e.Kind, e.Host, e.User, e.HookwatchVersion, e.Traceparent}),
		sum:      maphash.Bytes(payloadSeed, e.Payload),
		size:     len(e.Payload),
	}
	if e.Subagent != nil || e.ForkOf != "" || e.ExitCode != nil || e.Files != nil || e.Decision != nil {
		it.rare = &envRare{Subagent: e.Subagent, ForkOf: e.ForkOf, ExitCode: e.ExitCode, Files: e.Files, Decision: e.Decision}
	}
	if p == nil {
		p, _ = event.Decode(e.Payload) // nil when not an object: not attributable
	}
	if it.p = ts.view(p); it.p.Common != nil {
		var pc *event.ToolCall
		if post, ok := it.p.Event.(*event.PostToolUseInput); ok && pre != nil {
			pc = pre(it.p.SessionID, post.ToolUseID)
		}
		if n, ok := ownTool(&it.p, &it.id, ts.strs, pc); ok {
			it.size = n
		}
	}
	return it
}

// view is what an item keeps of a decoded payload: its typed views,
// without its map of members (Raw), which nothing the model derives reads
// once the views are built, and which is the largest part of a decoded
// payload. A group keeps a view for every event, and most of what a
// payload holds is its common fields, which a session's events repeat
// but for the prompt, the agent and the event's name: a view points to
// its group's one copy of them (tables.commons) rather than holding its
// own. Common.HookEventName is what event.Payload.Name answers.
type view struct {
	*event.Common
	// Event is the payload's typed event; a tool event's is the item's
	// own (ownTool).
	Event any
}

// Name returns the event's name, as event.Payload.Name does.
func (v view) Name() string { return v.HookEventName }

// Tool returns the tool-call fields of a tool event, as
// event.Payload.Tool does.
func (v view) Tool() *event.ToolCall { return event.ToolOf(v.Event) }

// tables are the values a group's items share rather than each keeping
// its own copy: the strings their payloads repeat (the session, its
// paths, the agent, the prompt), and the sets of fields their envelopes'
// clients repeat from one envelope to the next.
type tables struct {
	strs    strs
	envs    table[envCommon]    // the envelopes' common fields
	commons table[event.Common] // the payloads' (view.Common)
	efforts table[event.Effort] // what a payload's Common.Effort points to
}

func newTables() tables {
	return tables{strs: strs{}, envs: table[envCommon]{}, commons: table[event.Common]{}, efforts: table[event.Effort]{}}
}

// view returns what an item keeps of the decoded payload p, the zero view
// when p is nil. p is not changed, and the view points into none of its
// objects but Event, which ownTool replaces for the events whose Event
// shares an object with the payload (a tool call's, a tool result's).
func (ts *tables) view(p *event.Payload) view {
	if p == nil {
		return view{}
	}
	in, c := ts.strs, p.Common
	c.HookEventName = in.of(p.Name())
	c.SessionID, c.TranscriptPath, c.CWD = in.of(c.SessionID), in.of(c.TranscriptPath), in.of(c.CWD)
	c.AgentID, c.AgentType.Value, c.PromptID = in.of(c.AgentID), in.of(c.AgentType.Value), in.of(c.PromptID)
	c.Model, c.TurnID, c.ScratchpadDir = in.of(c.Model), in.of(c.TurnID), in.of(c.ScratchpadDir)
	c.PermissionMode, c.AgentNickname = in.of(c.PermissionMode), in.of(c.AgentNickname)
	if c.Effort != nil {
		// By value: two payloads' efforts are two objects.
		c.Effort = ts.efforts.of(*c.Effort)
	}
	return view{Common: ts.commons.of(c), Event: p.Event}
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

// table holds one copy of each value of a kind the items of a group
// repeat (tables), as strs does of strings.
type table[K comparable] map[K]*K

// of returns the table's copy of k, which a copy of k becomes when the
// table has none. Past maxStrs values a copy of k is returned and not
// kept: the table stays bounded when values never repeat (a trace context
// of its own for every event), and each value past it costs what it
// would unshared.
func (t table[K]) of(k K) *K {
	if c, ok := t[k]; ok {
		return c
	}
	c := new(K) // not &k, which would move k to the heap on every call
	*c = k
	if len(t) < maxStrs {
		t[k] = c
	}
	return c
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
	if p.Common == nil || p.SessionID == "" {
		return nil
	}
	if _, ok := p.Event.(*event.TranscriptUsageInput); ok && p.Model == claudecode.SyntheticModel {
		// A record the client wrote itself (an API error) is no API
		// response: earlier imports made usage of it, of zeros and of no
		// model; the model holds no such record, as a new import makes none.
		return nil
	}
	// The item's record, made again when the group is derived again: by
	// then nothing holds the one it replaces.
	it.rec = record{
		item: it, seq: seq, session: p.SessionID,
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

// ownTool gives the view of a tool event (PreToolUse, PostToolUse) an
// event of its own, whose bytes are its own too: the decoder made the
// event in one object with its payload, and may have left its views in
// the payload's bytes (event.ViewsOf), either of which a view would keep
// whole. A PostToolUse keeps its tool_response only where the model reads
// it (keepsResponse). The envelope's id, which no other event shares,
// moves into the same bytes: one object kept per event rather than two,
// each of which every collection marks. *id is the item's own, changed in
// place. A PostToolUse whose call's PreToolUse is known (pre, else nil)
// keeps no copy of the tool_use_id and tool_input they have alike: it
// shares the PreToolUse's. It returns how many bytes the item now owns,
// and false when v is no tool event's.
func ownTool(v *view, id *string, in strs, pre *event.ToolCall) (int, bool) {
	var call *event.ToolCall
	var resp *json.RawMessage
	switch e := v.Event.(type) {
	case *event.PreToolUseInput:
		own := *e
		v.Event, call = &own, &own.ToolCall
	case *event.PostToolUseInput:
		own := new(toolResult)
		own.PostToolUseInput = *e
		if e.DurationMS != nil {
			own.duration = *e.DurationMS
			own.DurationMS = &own.duration
		}
		v.Event, call, resp = &own.PostToolUseInput, &own.ToolCall, &own.ToolResponse
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
	// The same bytes, whichever event they are read from.
	shareID := pre != nil && call.ToolUseID != "" && call.ToolUseID == pre.ToolUseID
	shareInput := pre != nil && call.ToolInput != nil && pre.ToolInput != nil && bytes.Equal(call.ToolInput, pre.ToolInput)
	size := len(*id) + len(r)
	if !shareID {
		size += len(call.ToolUseID)
	}
	if !shareInput {
		size += len(call.ToolInput)
	}
	buf := make([]byte, 0, size)
	buf = append(buf, *id...)
	if !shareID {
		buf = append(buf, call.ToolUseID...)
	}
	if !shareInput {
		buf = append(buf, call.ToolInput...)
	}
	buf = append(buf, r...)
	call.ToolName = in.own(call.ToolName)
	if n := len(*id); n > 0 {
		*id, buf = unsafe.String(&buf[0], n), buf[n:]
	}
	switch n := len(call.ToolUseID); {
	case shareID:
		call.ToolUseID = pre.ToolUseID
	case n > 0:
		call.ToolUseID, buf = unsafe.String(&buf[0], n), buf[n:]
	}
	switch n := len(call.ToolInput); {
	case shareInput:
		call.ToolInput = pre.ToolInput
	case call.ToolInput != nil:
		call.ToolInput, buf = buf[:n:n], buf[n:]
	}
	if r != nil {
		*resp = buf
	}
	return size, true
}

// toolResult is a PostToolUse's event as a view keeps it: with the
// duration its DurationMS points to, in one object.
type toolResult struct {
	event.PostToolUseInput
	duration float64
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
