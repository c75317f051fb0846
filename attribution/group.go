package attribution

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/hookwatch/hookwatch/event"
)

// Group keeps the model of one lineage group (the sessions that lineage can
// link: GroupKey) up to date as envelopes arrive, for a caller that receives
// them over time: the collector applies each commit to the group it touches
// and stores what changed.
//
// Apply takes new envelopes in any order, with any duplicates. An envelope
// that sorts after everything applied so far is applied to the kept state
// of its session: its call and agent are updated, the session's fields and
// counts adjusted, and nothing else is read again, so a long session costs
// the same per event as a short one. Envelopes that sort before one already
// applied are applied to their sessions' kept state too when that gives the
// same model (the usage of API responses, which serve --watch-transcripts
// reads after the hooks' later events); otherwise each session they belong
// to is derived again from its records, once for all of them, and reports
// what differs from what it reported before. The group is
// rebuilt from all its envelopes only when one replaces an applied envelope
// of the same id, or when one changes or may change the lineage (a session
// start, end or compaction, a continue's throwaway id, a fork, an envelope
// before another's that the lineage reads). Result always equals Build of
// every envelope applied; the property tests hold that for every order,
// split into batches and duplication of the real captures.
//
// A Group is not safe for concurrent use.
type Group struct {
	byID idIndex
	anon map[string]*item // envelopes without an id, by content
	all  []*item          // every distinct envelope applied
	last *item            // the greatest envelope applied

	recs     []*record // attributable records, in canonical order
	skipped  int
	lin      *lineage
	lx       *linkIndex // recs indexed for linkSessions; nil until it runs
	sessions map[string]*sessionBuilder
	order    []string // sessions by first record
	raw      map[string]*rawSession
	preOnly  map[*rawSession]bool
	tables   // the values the items share

	touched map[string]bool // sessions changed since Changes
	redone  map[string]bool // sessions to report whole at the next Changes
	// prior are the builders, as Changes last saw them, of the sessions
	// derived again since: their changes are what differs from them.
	prior     map[string]*sessionBuilder
	reset     bool // rebuilt since Changes
	rebuilds  int
	rederived int // sessions derived again for late envelopes
	bytes     int
}

// rawSession is what lineage reads of one session id (before throwaway ids
// are folded), kept to tell whether a new record can change the lineage.
type rawSession struct {
	id          string
	first, last *record
	// preOnly: every record so far is a pre-start event.
	preOnly bool
	// orphanCandidate: the latest SessionStart is a resume or fork and no
	// record other than pre-start events followed it yet.
	orphanCandidate bool
	// nextSeen: a record of another session of last's group came after
	// last.
	nextSeen bool
}

// NewGroup returns an empty Group.
func NewGroup() *Group {
	g := &Group{byID: newIDIndex(), anon: map[string]*item{}, touched: map[string]bool{}, redone: map[string]bool{},
		prior: map[string]*sessionBuilder{}, tables: newTables()}
	g.clear()
	return g
}

func (g *Group) clear() {
	g.recs, g.skipped, g.lin, g.lx = nil, 0, &lineage{}, nil
	g.sessions, g.order = map[string]*sessionBuilder{}, nil
	g.raw, g.preOnly = map[string]*rawSession{}, map[*rawSession]bool{}
}

// Len returns the number of distinct envelopes applied.
func (g *Group) Len() int { return len(g.all) }

// Bytes returns what the group keeps of its payloads' bytes: for a tool
// event, the bytes its views read (its id, input, and the output of a call
// that may spawn an agent); for any other, its payload's length.
func (g *Group) Bytes() int { return g.bytes }

// envelopeCost is what a group keeps per envelope besides its payload:
// the decoded payload, the record, and its share of the calls, agents and
// sessions. Measured at 2.9 KiB per envelope on the import benchmark's
// transcripts (internal/bench: ImportTree, whose payloads average 0.7 KiB):
// counting payloads alone underestimated a group's memory five times.
const envelopeCost = 3 << 10

// Size returns an estimate of the memory the group holds, its payloads
// and what it derived of them, for a caller that bounds the memory its
// groups keep. It counts what Bytes does and envelopeCost per envelope.
func (g *Group) Size() int { return g.bytes + len(g.all)*envelopeCost }

// Rebuilds returns how many times the group was rebuilt from all its
// envelopes after its first Apply.
func (g *Group) Rebuilds() int { return g.rebuilds }

// Rederived returns how many times a session of the group was derived
// again from its records for envelopes that sorted before applied ones and
// could not be applied to its state as it stood.
func (g *Group) Rederived() int { return g.rederived }

// Apply applies envelopes (copies of them) to the group. An envelope whose
// id was already applied replaces the earlier one only if it sorts before
// it, as in Build; envelopes without an id are dropped only when wholly
// identical to one applied.
func (g *Group) Apply(envs ...event.Envelope) { g.ApplyDecoded(envs, nil) }

// ApplyDecoded is Apply for envelopes some of whose payloads were decoded
// already: payloads[i], when not nil, must be event.Decode of
// envs[i].Payload (or its typed views alone, as event.ViewsOf makes them),
// and is used instead of decoding it again. The group reads payloads[i]
// and neither keeps nor changes it: of a payload it keeps a view whose
// common fields it shares with the group's other payloads' and whose
// strings and bytes are copies of its own (a tool event's tool_response
// only where it reads it), so that no payload's objects or bytes stay
// alive for the group's sake but an event other than a tool call's or
// result's (view). envs are not changed.
func (g *Group) ApplyDecoded(envs []event.Envelope, payloads []*event.Payload) {
	fresh := make([]*item, 0, len(envs))
	rebuild := false
	// The PreToolUses of envs, by tool_use_id, for their PostToolUses to
	// share their bytes (preOf).
	var pres map[string]*event.ToolCall
	preOf := func(sessionID, toolUseID string) *event.ToolCall { return g.preOf(pres, sessionID, toolUseID) }
	for i := range envs {
		var p *event.Payload
		if i < len(payloads) {
			p = payloads[i]
		}
		it := newItem(&envs[i], p, &g.tables, preOf)
		if e, ok := it.p.Event.(*event.PreToolUseInput); ok && e.ToolUseID != "" {
			if pres == nil {
				pres = map[string]*event.ToolCall{}
			}
			pres[e.ToolUseID] = &e.ToolCall
		}
		if it.id == "" {
			k := contentKey(it)
			if _, ok := g.anon[k]; ok {
				continue
			}
			g.anon[k] = it
		} else if cur, h := g.byID.get(it.id); cur != nil {
			if compareItems(it, cur) >= 0 {
				continue
			}
			// Same id, other content that sorts first: it replaces cur.
			g.byID.put(h, it)
			g.all[slices.Index(g.all, cur)] = it
			g.bytes += it.size - cur.size
			if cur.applied {
				rebuild = true
			} else {
				fresh[slices.Index(fresh, cur)] = it
			}
			continue
		} else {
			g.byID.put(h, it)
		}
		g.all = append(g.all, it)
		g.bytes += it.size
		fresh = append(fresh, it)
	}
	if len(fresh) == 0 && !rebuild {
		return
	}
	slices.SortFunc(fresh, compareItems)
	if rebuild || g.last == nil {
		g.rebuild()
		return
	}
	// Those that sort before the greatest applied come first, together.
	late, _ := slices.BinarySearchFunc(fresh, g.last, compareItems)
	if late > 0 && !g.insertLate(fresh[:late]) {
		g.rebuild()
		return
	}
	for _, it := range fresh[late:] {
		if !g.append(it) {
			g.rebuild()
			return
		}
	}
	for id := range g.touched {
		if b := g.sessions[id]; b != nil {
			b.settle()
		}
	}
}

// preOf returns the tool call fields a PostToolUse's PreToolUse reported:
// of one among those about to be applied (pres, by tool_use_id), else of
// the call the group holds, nil when neither knows it. Only whether their
// bytes are alike matters (ownTool shares them where they are), not whose
// they are.
func (g *Group) preOf(pres map[string]*event.ToolCall, sessionID, toolUseID string) *event.ToolCall {
	if tc := pres[toolUseID]; tc != nil {
		return tc
	}
	if b := g.sessions[sessionID]; b != nil {
		if c := b.calls[toolUseID]; c != nil && c.pre != nil {
			return c.pre.p.Tool()
		}
	}
	return nil
}

// append applies one envelope that sorts after every applied one. It
// reports false when the envelope changed the lineage: the group must be
// rebuilt.
func (g *Group) append(it *item) bool {
	it.applied = true
	g.last = it
	r := newRecord(it, len(g.recs), g.strs)
	if r == nil {
		g.skipped++
		return true
	}
	relink := g.changesLineage(r)
	g.recs = append(g.recs, r)
	if g.lx != nil {
		g.lx.add(r)
	}
	g.note(r)
	if relink {
		lin := g.link()
		if !lin.equal(g.lin) {
			return false
		}
		g.lin = lin
		for _, b := range g.sessions {
			b.lin = lin
		}
	} else if to, ok := g.lin.alias[r.session]; ok {
		r.session, r.alias = to, true
	}
	g.add(r)
	g.touched[r.session] = true
	return true
}

// add adds a record to its session, which it starts when r is the first.
func (g *Group) add(r *record) {
	b := g.sessions[r.session]
	if b == nil {
		b = newSessionBuilder(r.session, r, g.lin)
		g.sessions[r.session] = b
		g.order = append(g.order, r.session)
	}
	b.add(r)
}

// insertLate applies envelopes (in canonical order) that sort before an
// applied one. Each is applied to its session's kept state when that gives
// what deriving the session again would (sessionBuilder.commutesLate: the
// usage of an API response, which serve --watch-transcripts reads from the
// transcripts after the hooks' later events); the other sessions they
// belong to are derived again from their records, once for all of them.
// It reports false when an envelope might change the lineage, or when the
// group holds envelopes without an id: the group must be rebuilt. The
// rules are changesLineage's, more cautious: besides them, a late record
// must not come before its session's first, and no session of its group
// may be pre-start only, nor may its own session be a fork's parent when
// the record lands before its latest record.
func (g *Group) insertLate(items []*item) bool {
	if len(g.anon) > 0 {
		// A record without an envelope id names a call it starts by its
		// position (nouse:#seq), which a late record moves, in whichever
		// session it is.
		return false
	}
	var recs []*record
	redo := map[string]bool{}
	for _, it := range items {
		it.applied = true
		r := newRecord(it, 0, g.strs)
		if r == nil {
			g.skipped++
			continue
		}
		rs := g.raw[r.p.SessionID]
		if g.changesLineage(r) || compareItems(r.item, rs.first.item) < 0 {
			return false
		}
		for t := range g.preOnly {
			if t.last.group == r.group {
				return false
			}
		}
		if compareItems(r.item, rs.last.item) < 0 {
			for o := range g.lin.forkedTo {
				if o.p.SessionID == rs.id {
					return false
				}
			}
		} else {
			rs.last = r
		}
		if to, ok := g.lin.alias[r.session]; ok {
			r.session, r.alias = to, true
		}
		recs = append(recs, r)
		if b := g.sessions[r.session]; !redo[r.session] && b.commutesLate(r) {
			b.add(r)
			g.touched[r.session] = true
		} else {
			redo[r.session] = true
		}
	}
	if len(recs) == 0 {
		return true
	}
	var from int // where the first lands: the records before it keep their places
	g.recs, from = mergeRecords(g.recs, recs)
	for i := from; i < len(g.recs); i++ {
		g.recs[i].seq = i
	}
	g.lx = nil // indexed again when the lineage next is
	if len(redo) == 0 {
		return true
	}
	// The sessions' records, in order, into new builders; what the old ones
	// were told by the group (their children) carries over.
	fresh := map[string]*sessionBuilder{}
	for _, x := range g.recs {
		if !redo[x.session] {
			continue
		}
		b := fresh[x.session]
		if b == nil {
			b = newSessionBuilder(x.session, x, g.lin)
			b.s.ChildSessionIDs = g.sessions[x.session].s.ChildSessionIDs
			fresh[x.session] = b
		}
		b.add(x)
	}
	g.rederived += len(fresh)
	for id, b := range fresh {
		if _, ok := g.prior[id]; !ok {
			g.prior[id] = g.sessions[id]
		}
		g.sessions[id] = b
		g.touched[id] = true
	}
	return true
}

// mergeRecords merges late into recs, both in canonical order, and returns
// the result and where the first of late landed. It merges from the end,
// in place: late records are few, and land near it.
func mergeRecords(recs, late []*record) ([]*record, int) {
	i, j := len(recs)-1, len(late)-1
	recs = append(recs, late...) // room for them
	w := len(recs) - 1
	for ; j >= 0; w-- {
		if i >= 0 && compareItems(recs[i].item, late[j].item) > 0 {
			recs[w] = recs[i]
			i--
		} else {
			recs[w] = late[j]
			j--
		}
	}
	return recs, w + 1
}

// changesLineage reports whether appending r can change what linkSessions
// derives; see the rules in the package doc. Only records that can start,
// end, fork, fold or compact a session, or that end a session's state of
// being pre-start only or an orphan candidate, or that are the first of
// another session after a pre-start-only one, can.
func (g *Group) changesLineage(r *record) bool {
	switch {
	case preStart(r.name()), r.name() == event.SessionStart, r.name() == event.SessionEnd, r.name() == event.PreCompact:
		return true
	}
	// A session's last record's group matters to lineage only while the
	// session is pre-start only (the group its next record is looked for
	// in), so a session's records may move between groups (a statusLine
	// names its project by cwd, a hook by transcript path) without a
	// relink.
	rs := g.raw[r.p.SessionID]
	if rs == nil || rs.preOnly || rs.orphanCandidate {
		return true
	}
	for t := range g.preOnly {
		if !t.nextSeen && t.last.group == r.group {
			return true
		}
	}
	return false
}

// note updates the raw sessions with r, the newest record.
func (g *Group) note(r *record) {
	id := r.p.SessionID
	rs := g.raw[id]
	if rs == nil {
		rs = &rawSession{id: id, first: r, preOnly: true}
		g.raw[id] = rs
		g.preOnly[rs] = true
	}
	for t := range g.preOnly {
		if t != rs && t.last.group == r.group {
			t.nextSeen = true
		}
	}
	rs.last, rs.nextSeen = r, false
	switch {
	case clientStart(r):
		src := startSource(r)
		rs.orphanCandidate = src == "resume" || src == "fork"
	case !preStart(r.name()):
		rs.orphanCandidate = false
	}
	if rs.preOnly && !preStart(r.name()) {
		rs.preOnly = false
		delete(g.preOnly, rs)
	}
}

// link derives the lineage of every record afresh. Only the records of
// the throwaway ids folded so far name another session than their own.
func (g *Group) link() *lineage {
	if g.lx == nil {
		g.lx = newLinkIndex(g.recs)
	}
	for id := range g.lin.alias {
		for _, r := range g.lx.sessions[id].recs {
			r.session, r.alias = id, false
		}
	}
	return linkSessions(g.lx)
}

// rebuild derives the group again from every envelope applied.
func (g *Group) rebuild() {
	if g.last != nil {
		g.rebuilds++
	}
	g.clear()
	g.reset = true
	g.last = nil
	for _, it := range g.all {
		it.applied = true
		if g.last == nil || compareItems(it, g.last) > 0 {
			g.last = it
		}
	}
	g.recs, g.skipped = decodeAll(canonicalOrder(g.all), g.strs)
	for _, r := range g.recs {
		g.note(r)
	}
	g.lx = newLinkIndex(g.recs)
	g.lin = linkSessions(g.lx)
	for _, r := range g.recs {
		g.add(r)
	}
	for _, id := range g.order {
		g.sessions[id].settle()
		g.touched[id] = true
	}
	// Children in order of start, as Result lists sessions.
	for _, s := range g.sorted() {
		if p := g.sessions[s.ParentSessionID]; p != nil {
			p.s.ChildSessionIDs = append(p.s.ChildSessionIDs, s.SessionID)
		}
	}
}

// sorted returns the sessions by start, then id.
func (g *Group) sorted() []*Session {
	out := make([]*Session, 0, len(g.order))
	for _, id := range g.order {
		out = append(out, g.sessions[id].s)
	}
	slices.SortFunc(out, func(a, b *Session) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	return out
}

// Result returns the whole model: Build of every envelope applied. It shares
// memory with the group: treat it as read-only, and as invalid after the
// next Apply.
func (g *Group) Result() *Result {
	res := &Result{Skipped: g.skipped, Sessions: g.sorted()}
	for _, id := range g.order {
		g.sessions[id].snapshot()
	}
	if len(g.lin.alias) > 0 {
		res.Aliases = g.lin.alias
	}
	return res
}

// Session returns the session with the given id (not a throwaway id), as
// of the last Apply, without its agents and calls, or nil. It shares
// memory with the group: treat it as read-only, and as invalid after the
// next Apply.
func (g *Group) Session(id string) *Session {
	if b := g.sessions[id]; b != nil {
		return b.s
	}
	return nil
}

// ToolCalls returns the calls of session id as the group holds them now
// (nil for a session it does not hold), in no particular order. They are
// the group's own: read them before the next Apply, never change them.
func (g *Group) ToolCalls(id string) []*ToolCall {
	b := g.sessions[id]
	if b == nil {
		return nil
	}
	out := make([]*ToolCall, len(b.callSeq))
	for i, c := range b.callSeq {
		out[i] = c.c
	}
	return out
}

// Agents returns the agents of session id as the group holds them now (nil
// for a session it does not hold), in no particular order. They are the
// group's own: read them before the next Apply, never change them.
func (g *Group) Agents(id string) []*Agent {
	b := g.sessions[id]
	if b == nil {
		return nil
	}
	out := make([]*Agent, len(b.agentSeq))
	for i, a := range b.agentSeq {
		out[i] = a.a
	}
	return out
}

// Changes is what changed in a group since the previous call of
// Group.Changes.
type Changes struct {
	// Reset is set when the group was rebuilt: Sessions then holds every
	// session of the group with all of its agents and calls, and a session
	// known before that is in neither Sessions nor Aliases is gone.
	Reset bool
	// Sessions are the sessions that changed, by first record, each with
	// its agents and calls that changed.
	Sessions []SessionChanges
	// Aliases maps every throwaway session id of the group to the session
	// its events were folded into (all of them, on every call).
	Aliases map[string]string
}

// SessionChanges is one session's part of Changes. Later Applies do not
// change the values: the agents and the summary are copies; a call is the
// group's own version, which it copies before it changes it, so that a
// call that no longer changes is held once by the group and whoever keeps
// it. They must not be changed.
type SessionChanges struct {
	// Reset is set when the session alone was derived again (an envelope
	// of it arrived late) and lost an agent or a call, or moved a call to
	// another start, since the last Changes (else only what differs is
	// reported, as for any change): Agents and ToolCalls then hold all of
	// its agents and calls, and one known before that is in neither is
	// gone.
	Reset bool
	// Session is the session's summary (without agents and calls).
	Session *Session
	// Agents and ToolCalls are the session's agents and calls that
	// changed, in the order of Session.Agents and Session.ToolCalls.
	Agents    []*Agent
	ToolCalls []*ToolCall
}

// Restate makes the next Changes report session id whole, as derived
// again (SessionChanges.Reset: all of its agents and calls), whatever
// earlier calls reported. It is for a new writer of the model, whose store
// may lag what the group holds. A session the group does not hold (a
// throwaway id, or none) is ignored.
func (g *Group) Restate(id string) {
	if _, ok := g.sessions[id]; ok {
		g.touched[id] = true
		g.redone[id] = true
	}
}

// RestateRows makes the next Changes report, of session id, the agents and
// calls that agent and call accept (by AgentID and ToolUseID) as changed,
// whether they changed or not, besides those that did. It is Restate for a
// new writer of the model that knows which rows its store may lack (those
// that changed after the last change the previous writer stored), so that
// it writes those rather than the session whole. A session the group does
// not hold is ignored.
func (g *Group) RestateRows(id string, agent, call func(id string) bool) {
	b, ok := g.sessions[id]
	if !ok {
		return
	}
	g.touched[id] = true
	for _, a := range b.agentSeq {
		if agent(a.a.AgentID) {
			a.shown = nil
		}
	}
	for _, c := range b.callSeq {
		if !c.reported && call(c.c.ToolUseID) {
			c.reported = true
			b.changed = append(b.changed, c)
		}
	}
}

// Changes returns what changed since the previous call, and forgets it.
func (g *Group) Changes() Changes {
	out := Changes{Reset: g.reset, Aliases: map[string]string{}}
	for k, v := range g.lin.alias {
		out.Aliases[k] = v
	}
	for _, id := range g.order {
		if !g.touched[id] {
			continue
		}
		b := g.sessions[id]
		all := g.reset || g.redone[id]
		if old := g.prior[id]; old != nil && !all && !b.follows(old) {
			all = true
		}
		sc := b.changes(all)
		sc.Reset = !g.reset && all
		out.Sessions = append(out.Sessions, sc)
	}
	clear(g.touched)
	clear(g.redone)
	clear(g.prior)
	g.reset = false
	return out
}

// changes returns the session's changes since the last call (all of it
// with all set) and forgets them.
func (b *sessionBuilder) changes(all bool) SessionChanges {
	s := *b.s
	s.Agents, s.ToolCalls = nil, nil
	s.Runs = slices.Clone(s.Runs)
	s.Compactions = slices.Clone(s.Compactions)
	s.ChildSessionIDs = slices.Clone(s.ChildSessionIDs)
	s.AliasSessionIDs = slices.Clone(s.AliasSessionIDs)
	s.Turns = slices.Clone(s.Turns)
	s.SharedPrompts = slices.Clone(s.SharedPrompts)
	s.MatchedCalls = slices.Clone(s.MatchedCalls)
	for i := range s.MatchedCalls {
		s.MatchedCalls[i].EventIDs = slices.Clone(s.MatchedCalls[i].EventIDs)
	}
	out := SessionChanges{Session: &s}
	for _, a := range b.agentSeq {
		if all || a.shown == nil || !sameAgent(a.shown, a.a) {
			c := *a.a
			a.shown = &c
			out.Agents = append(out.Agents, &c)
		}
	}
	slices.SortFunc(out.Agents, compareAgents)
	calls := b.changed
	if all {
		calls = b.callSeq
	}
	for _, c := range calls {
		// Handed out as it is: the call is copied before it changes again
		// (callState.own), and one that no longer changes is held once.
		c.reported, c.shared = false, true
		out.ToolCalls = append(out.ToolCalls, c.c)
	}
	b.changed = b.changed[:0]
	slices.SortFunc(out.ToolCalls, compareCalls)
	return out
}

// follows reports whether the changes of b, a session derived again, can
// bring what old, the same session before, reported to b's state: every
// agent and call old had is still in b, each call at the same start. Then
// it leaves among b's changes only the agents and calls that differ from
// what old last reported, so that a late event reports what it moved
// rather than the session whole. A call differs when its document does
// (ToolCall.AppendJSON, what a store keeps of it).
func (b *sessionBuilder) follows(old *sessionBuilder) bool {
	for _, a := range old.agentSeq {
		if b.agents[a.a.AgentID] == nil {
			return false
		}
	}
	for _, c := range old.callSeq {
		// A store keys a call by its start too: one that moved is
		// replaced with the session whole.
		if n := b.calls[c.c.ToolUseID]; n == nil || !n.c.StartedAt.Equal(c.c.StartedAt) {
			return false
		}
	}
	for _, a := range b.agentSeq {
		if o := old.agents[a.a.AgentID]; o != nil {
			a.shown = o.shown
		}
	}
	var was, is []byte
	changed := b.changed[:0]
	for _, c := range b.changed {
		// An old call not reported since it last changed is as Changes
		// handed it out.
		if o := old.calls[c.c.ToolUseID]; o != nil && !o.reported {
			var err1, err2 error
			was, err1 = o.c.AppendJSON(was[:0])
			is, err2 = c.c.AppendJSON(is[:0])
			if err1 == nil && err2 == nil && bytes.Equal(was, is) {
				// The version handed out, held once.
				c.c, c.shared, c.reported = o.c, true, false
				continue
			}
		}
		changed = append(changed, c)
	}
	clear(b.changed[len(changed):])
	b.changed = changed
	return true
}

// sameAgent reports whether two versions of an agent are equal.
func sameAgent(x, y *Agent) bool {
	eqs := func(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	return x.AgentID == y.AgentID && eqs(x.AgentType, y.AgentType) && eqs(x.ParentAgentID, y.ParentAgentID) &&
		x.SpawnToolUseID == y.SpawnToolUseID && x.Depth == y.Depth && x.StartedAt.Equal(y.StartedAt) &&
		x.LastEventAt.Equal(y.LastEventAt) &&
		(x.StoppedAt == nil) == (y.StoppedAt == nil) && (x.StoppedAt == nil || x.StoppedAt.Equal(*y.StoppedAt)) &&
		x.Role == y.Role && x.ResolvedBy == y.ResolvedBy && x.Description == y.Description && x.Nickname == y.Nickname &&
		x.TranscriptPath == y.TranscriptPath && x.LastMessage == y.LastMessage &&
		x.VirtualSessionID == y.VirtualSessionID && x.Events == y.Events && x.ToolCount == y.ToolCount &&
		x.Failures == y.Failures && x.Denials == y.Denials && x.Rejected == y.Rejected &&
		x.StartSources == y.StartSources && x.StopSources == y.StopSources && x.StopError == y.StopError &&
		x.Background == y.Background && x.NotificationStatus == y.NotificationStatus && sameUsage(x.Usage, y.Usage) && x.Model == y.Model && x.Traceparent == y.Traceparent &&
		(x.NotifiedAt == nil) == (y.NotifiedAt == nil) && (x.NotifiedAt == nil || x.NotifiedAt.Equal(*y.NotifiedAt))
}

// equal reports whether two lineages link the same records the same way.
func (l *lineage) equal(m *lineage) bool {
	return mapsEqual(l.alias, m.alias) && mapsEqual(l.aliasAt, m.aliasAt) && mapsEqual(l.parent, m.parent) &&
		mapsEqual(l.kind, m.kind) && mapsEqual(l.forkedTo, m.forkedTo) && mapsEqual(l.forkFrom, m.forkFrom) &&
		mapsEqual(l.phantom, m.phantom)
}

func mapsEqual[K, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// contentKey identifies an envelope without an id by everything
// compareItems compares.
func contentKey(it *item) string {
	common, rare := it.common, it.rareFields()
	var b strings.Builder
	b.WriteString(strconv.FormatInt(it.recvSec, 10))
	b.WriteByte('.')
	b.WriteString(strconv.FormatInt(int64(it.recvNsec), 10))
	b.WriteByte(0)
	b.WriteString(strconv.FormatUint(it.sum, 16))
	for _, s := range []string{string(rare.Decision), common.Runtime, common.Kind, common.Host, common.User, common.HookwatchVersion, rare.ForkOf, common.Traceparent} {
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	for _, f := range rare.Files {
		b.WriteString("\x00file:" + strconv.Quote(f.Path) + strconv.FormatInt(f.MtimeNS, 10) + ":" + strconv.FormatInt(f.Size, 10) + strconv.Quote(f.Hash))
	}
	if m := rare.Subagent; m != nil {
		b.WriteString("\x00meta:" + strconv.Quote(m.ToolUseID) + strconv.Quote(m.AgentType) + strconv.Quote(m.Description) + strconv.Itoa(m.SpawnDepth))
	}
	return b.String()
}
