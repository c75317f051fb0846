package attribution

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// record is one decoded envelope in the derivation order.
type record struct {
	env  *event.Envelope
	p    *event.Payload
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
func (r *record) at() time.Time { return r.env.ReceivedAt }

// compareEnvelopes is a total order on envelope content: received_at, id,
// then every other field, so that envelopes differing in anything never
// compare equal and the choice among same-id duplicates does not depend on
// input order.
func compareEnvelopes(a, b *event.Envelope) int {
	if c := a.ReceivedAt.Compare(b.ReceivedAt); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Payload, b.Payload); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Decision, b.Decision); c != 0 {
		return c
	}
	for _, c := range [...]int{
		strings.Compare(a.Runtime, b.Runtime),
		strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Host, b.Host),
		strings.Compare(a.User, b.User),
		strings.Compare(a.HookwatchVersion, b.HookwatchVersion),
		strings.Compare(a.ForkOf, b.ForkOf),
		strings.Compare(a.Traceparent, b.Traceparent),
	} {
		if c != 0 {
			return c
		}
	}
	if c := slices.CompareFunc(a.Files, b.Files, compareFileState); c != 0 {
		return c
	}
	return compareMeta(a.Subagent, b.Subagent)
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

// item is an envelope with its payload decoded once (a Builder keeps items
// across Results).
type item struct {
	env     *event.Envelope
	p       *event.Payload
	decoded bool
	applied bool // a Group derived from it
	// own is the envelope env points at when the item holds its own copy,
	// and rec the record newRecord made of the item last: one object per
	// envelope kept rather than three.
	own event.Envelope
	rec record
}

func (it *item) payload(in strs) *event.Payload {
	if !it.decoded {
		it.decoded = true
		if p, err := event.Decode(it.env.Payload); err == nil {
			it.p = kept(p, in)
		}
	}
	return it.p
}

// keptDecoded returns what an item keeps of p, a payload its caller
// decoded: p itself when it is the typed views alone (as event.ViewsOf
// gives them: no map of members, the name in HookEventName), which the
// item only reads, else kept of a copy of p, so that p is not changed.
// Keeping p rather than a copy keeps one Payload per event, not two: a
// decoded tool event's views are one allocation with its Payload, which
// the copy's Event would hold anyway.
func keptDecoded(p *event.Payload, in strs) *event.Payload {
	if p.Raw == nil && p.HookEventName != "" {
		return p
	}
	c := *p
	return kept(&c, in)
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

// canonicalOrder deduplicates items by envelope id (keeping, among same-id
// envelopes, the least by compareEnvelopes; envelopes without an id are
// deduplicated only when wholly identical) and sorts them by received_at,
// then id. The input slice is not modified.
func canonicalOrder(items []*item) []*item {
	byID := make(map[string]*item, len(items))
	out := make([]*item, 0, len(items))
	for _, it := range items {
		if it.env.ID == "" {
			out = append(out, it)
			continue
		}
		if cur, ok := byID[it.env.ID]; !ok || compareEnvelopes(it.env, cur.env) < 0 {
			byID[it.env.ID] = it
		}
	}
	for _, it := range byID {
		out = append(out, it)
	}
	cmpItems := func(a, b *item) int { return compareEnvelopes(a.env, b.env) }
	slices.SortFunc(out, cmpItems)
	return slices.CompactFunc(out, func(a, b *item) bool { return cmpItems(a, b) == 0 })
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
	p := it.payload(in)
	if p == nil || p.SessionID == "" {
		return nil
	}
	// The item's record, made again when the group is derived again: by
	// then nothing holds the one it replaces.
	e := it.env
	it.rec = record{
		env: e, p: p, name: p.Name(), seq: seq, session: p.SessionID,
		group: in.groupKey(e.Host, e.User, p.TranscriptPath, p.CWD),
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
