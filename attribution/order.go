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
	at   time.Time
	seq  int // position in the sorted, deduplicated input
	// session is the session the record counts for: the payload's
	// session_id, or the continued session for a throwaway id.
	session string
	alias   bool // folded in from a throwaway id
	group   string
}

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
	} {
		if c != 0 {
			return c
		}
	}
	return compareMeta(a.Subagent, b.Subagent)
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

// canonicalOrder deduplicates envs by id (keeping, among same-id envelopes,
// the least by compareEnvelopes; envelopes without an id are deduplicated
// only when wholly identical) and sorts them by received_at, then id. The
// input is not modified.
func canonicalOrder(envs []event.Envelope) []*event.Envelope {
	byID := make(map[string]*event.Envelope, len(envs))
	out := make([]*event.Envelope, 0, len(envs))
	for i := range envs {
		e := &envs[i]
		if e.ID == "" {
			out = append(out, e)
			continue
		}
		if cur, ok := byID[e.ID]; !ok || compareEnvelopes(e, cur) < 0 {
			byID[e.ID] = e
		}
	}
	for _, e := range byID {
		out = append(out, e)
	}
	slices.SortFunc(out, compareEnvelopes)
	return slices.CompactFunc(out, func(a, b *event.Envelope) bool { return compareEnvelopes(a, b) == 0 })
}

// decodeAll decodes the payloads of the ordered envelopes. It returns the
// records of attributable envelopes and how many were not.
func decodeAll(envs []*event.Envelope) ([]*record, int) {
	recs := make([]*record, 0, len(envs))
	skipped := 0
	for _, e := range envs {
		p, err := event.Decode(e.Payload)
		if err != nil || p.SessionID == "" {
			skipped++
			continue
		}
		r := &record{env: e, p: p, name: p.Name(), at: e.ReceivedAt.UTC(), seq: len(recs), session: p.SessionID}
		r.group = e.Host + "\x00" + e.User + "\x00" + projectOf(p.TranscriptPath, p.CWD)
		recs = append(recs, r)
	}
	return recs, skipped
}
