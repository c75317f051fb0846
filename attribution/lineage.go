package attribution

import (
	"sort"

	"github.com/hookwatch/hookwatch/event"
)

// lineage is what linkSessions derives; the rules are in the package doc.
type lineage struct {
	alias    map[string]string  // throwaway id → continued session
	aliasAt  map[*record]string // SessionStart a throwaway was folded into → throwaway id
	parent   map[string]string
	kind     map[string]string
	forkedTo map[*record]string // orphan SessionStart → forked session
	forkFrom map[string]*record // forked session → the orphan SessionStart of its run
	phantom  map[string]bool
}

// preStart reports whether an event may fire before SessionStart, under a
// continue's throwaway session id.
func preStart(name string) bool {
	switch name {
	case event.InstructionsLoaded, event.Setup, event.ConfigChange:
		return true
	}
	return false
}

// clientStart reports whether r is a SessionStart a hook reported: a
// client starting a run. One read from a client's file (a Codex fork's
// rollout, a Claude Code fork's transcript: event.IsEvidence) is the
// thread's own, under its own id: it
// starts a session as the hook's does (the fork rule), but is no orphan
// and no SessionStart a throwaway id folds into — after one, the session
// got a record of its own.
func clientStart(r *record) bool { return r.name() == event.SessionStart && !evidence(r) }

func startSource(r *record) string {
	if e, ok := r.p.Event.(*event.SessionStartInput); ok {
		return e.Source
	}
	return ""
}

// forkOf returns the parent the hook proved from the transcript of the
// fork whose records are s's (its SessionStart(fork) first): the ForkOf of
// the earliest SessionStart or SessionEnd of them that names one
// (event.Envelope.ForkOf), or "" when
// none does or it cannot be: a parent with records must be in the fork's
// group and have begun before it, so that lineage keeps no cycles whatever
// the envelopes claim. A parent without records is named all the same:
// its events were not captured, but the transcript proves it.
func forkOf(s *linkSession, ix *linkIndex) string {
	start := s.recs[0]
	var parent string
	for _, i := range s.marks {
		// The hook reads it on these two only; any record of them relinks
		// a Group, so that a late finding is not missed.
		r := s.recs[i]
		if r.name() != event.SessionStart && r.name() != event.SessionEnd {
			continue
		}
		if parent = r.rareFields().ForkOf; parent != "" {
			break
		}
	}
	if parent == "" || parent == start.session {
		return ""
	}
	if ps := ix.sessions[parent]; ps != nil && (ps.recs[0].group != start.group || ps.recs[0].seq > start.seq) {
		return ""
	}
	return parent
}

// linkIndex is what linkSessions reads of a group's records, each list in
// canonical order: each session id's records, each project's (record.group),
// and the records that start, end or compact a session. A Group keeps it
// as records are appended, so that deriving the lineage again, which a
// CLAUDE.md loaded in the middle of a session asks for as a compaction
// does, costs what the sessions and those records cost, not what every
// record of the group does.
type linkIndex struct {
	sessions map[string]*linkSession // by the payload's session id
	order    []string                // session ids by earliest record
	groups   map[string][]*record    // by record.group
	marks    []*record               // the SessionStart, SessionEnd and PreCompact records
}

// linkSession is one session id's records and the positions among them of
// its SessionStart, SessionEnd and PreCompact records.
type linkSession struct {
	recs  []*record
	marks []int
}

// newLinkIndex indexes recs, in canonical order.
func newLinkIndex(recs []*record) *linkIndex {
	ix := &linkIndex{sessions: map[string]*linkSession{}, groups: map[string][]*record{}}
	for _, r := range recs {
		ix.add(r)
	}
	return ix
}

// add indexes r, which sorts after every record indexed so far.
func (ix *linkIndex) add(r *record) {
	id := r.p.SessionID
	s := ix.sessions[id]
	if s == nil {
		s = &linkSession{}
		ix.sessions[id] = s
		ix.order = append(ix.order, id)
	}
	switch r.name() {
	case event.SessionStart, event.SessionEnd, event.PreCompact:
		s.marks = append(s.marks, len(s.recs))
		ix.marks = append(ix.marks, r)
	}
	s.recs = append(s.recs, r)
	ix.groups[r.group] = append(ix.groups[r.group], r)
}

// linkSessions derives the lineage of the sessions ix indexes, whose
// records' session must be their payload's session id, and folds throwaway
// ids into their sessions by setting record.session and record.alias.
func linkSessions(ix *linkIndex) *lineage {
	l := &lineage{
		alias: map[string]string{}, aliasAt: map[*record]string{}, parent: map[string]string{},
		kind: map[string]string{}, forkedTo: map[*record]string{}, forkFrom: map[string]*record{},
		phantom: map[string]bool{},
	}

	orphan := map[*record]bool{}
	compactStartAfter := map[*record]bool{} // PreCompact followed by its session's SessionStart(compact)
	for _, id := range ix.order {
		s := ix.sessions[id]
		var openPre []*record
		for _, i := range s.marks {
			switch r := s.recs[i]; r.name() {
			case event.PreCompact:
				openPre = append(openPre, r)
			case event.SessionStart:
				if !clientStart(r) {
					continue
				}
				src := startSource(r)
				if src == "compact" {
					for _, p := range openPre {
						compactStartAfter[p] = true
					}
					openPre = nil
				}
				if src != "resume" && src != "fork" {
					continue
				}
				o := true
				for _, n := range s.recs[i+1:] {
					if clientStart(n) {
						break
					}
					if !preStart(n.name()) {
						o = false
						break
					}
				}
				orphan[r] = o
			}
		}
	}

	// Per group, the records lineage can point at, in canonical order.
	type index struct{ all, orphans, clearEnds, preCompacts, starts []*record }
	idx := make(map[string]*index, len(ix.groups))
	for g, all := range ix.groups {
		idx[g] = &index{all: all}
	}
	for _, r := range ix.marks {
		x := idx[r.group]
		switch {
		case orphan[r]:
			x.orphans = append(x.orphans, r)
		case r.name() == event.SessionEnd:
			if e, ok := r.p.Event.(*event.SessionEndInput); ok && e.Reason == "clear" {
				x.clearEnds = append(x.clearEnds, r)
			}
		case r.name() == event.PreCompact && !compactStartAfter[r]:
			x.preCompacts = append(x.preCompacts, r)
		}
		if clientStart(r) {
			x.starts = append(x.starts, r)
		}
	}
	used := map[*record]bool{}
	// latest returns the latest unclaimed record of rs (ordered) before
	// first that is not of session first.session.
	latest := func(rs []*record, first *record) *record {
		i := sort.Search(len(rs), func(i int) bool { return rs[i].seq >= first.seq })
		for i--; i >= 0; i-- {
			if r := rs[i]; r.session != first.session && !used[r] {
				return r
			}
		}
		return nil
	}
	// next returns the first record of rs (ordered) after last that is not
	// of session last.session.
	next := func(rs []*record, last *record) *record {
		for i := sort.Search(len(rs), func(i int) bool { return rs[i].seq > last.seq }); i < len(rs); i++ {
			if rs[i].session != last.session {
				return rs[i]
			}
		}
		return nil
	}
	// prev returns the record of rs (ordered) right before first, if it is
	// not of session first.session.
	prev := func(rs []*record, first *record) *record {
		i := sort.Search(len(rs), func(i int) bool { return rs[i].seq >= first.seq })
		if i > 0 && rs[i-1].session != first.session {
			return rs[i-1]
		}
		return nil
	}
	fold := func(id string, into *record) {
		l.alias[id] = into.session
		if _, ok := l.aliasAt[into]; !ok {
			l.aliasAt[into] = id
		}
	}
	// forkOrphan returns the orphan a session whose earliest event is not a
	// SessionStart forked from: the latest unclaimed one before its first
	// event that is not a pre-start event (its first event when it has
	// none). The client runs a run's first hooks side by side, so the
	// fork's InstructionsLoaded may be stamped before the orphan
	// SessionStart of the session it forked. The orphan's session must
	// have begun before the fork, which keeps lineage free of cycles.
	forkOrphan := func(rs []*record, preOnly bool) *record {
		first, ref := rs[0], rs[0]
		if !preOnly {
			for _, r := range rs {
				if !preStart(r.name()) {
					ref = r
					break
				}
			}
		}
		o := latest(idx[first.group].orphans, ref)
		if o == nil || ix.sessions[o.session].recs[0].seq > first.seq {
			return nil
		}
		return o
	}
	// parentOrphan returns, for a fork whose start was read from its
	// transcript, the orphan its client sent under the parent's id when
	// it reported that start as a resume (2.1.197): the latest unclaimed
	// one of the parent before the fork's first event a hook sent that is
	// not a pre-start event (its last event when it has none), which the
	// fork took over as the hooks-only fork does (forkOrphan).
	parentOrphan := func(orphans, rs []*record, parent string) *record {
		ref := rs[len(rs)-1]
		for _, r := range rs {
			if !evidence(r) && !preStart(r.name()) {
				ref = r
				break
			}
		}
		for i := sort.Search(len(orphans), func(i int) bool { return orphans[i].seq >= ref.seq }) - 1; i >= 0; i-- {
			if o := orphans[i]; o.session == parent && !used[o] {
				return o
			}
		}
		return nil
	}
	fork := func(id string, o *record) {
		used[o] = true
		l.parent[id], l.kind[id] = o.session, LineageFork
		l.forkedTo[o], l.forkFrom[id] = id, o
	}

	for _, id := range ix.order {
		s := ix.sessions[id]
		rs := s.recs
		first, last := rs[0], rs[len(rs)-1]
		x := idx[first.group]
		if first.name() == event.SessionStart {
			switch startSource(first) {
			case "clear":
				if ev := latest(x.clearEnds, first); ev != nil {
					used[ev] = true
					l.parent[id], l.kind[id] = ev.session, LineageClear
				}
			case "fork":
				l.kind[id] = LineageFork
				if parent := forkOf(s, ix); parent != "" {
					l.parent[id] = parent
					if o := parentOrphan(x.orphans, rs, parent); o != nil && !clientStart(first) {
						fork(id, o)
					}
				} else if o := latest(x.orphans, first); o != nil {
					fork(id, o)
				}
			case "compact":
				if ev := latest(x.preCompacts, first); ev != nil {
					used[ev] = true
					l.parent[id], l.kind[id] = ev.session, LineageCompact
				}
			}
			continue
		}

		preOnly := true
		for _, r := range rs {
			if !preStart(r.name()) {
				preOnly = false
				break
			}
		}
		lx := idx[last.group]
		if preOnly {
			if n := next(lx.all, last); n != nil && clientStart(n) {
				fold(id, n)
				continue
			}
			// The hooks of one client start run side by side, so the
			// throwaway's InstructionsLoaded can be read just after the
			// continued session's SessionStart. An orphan SessionStart is
			// left to the fork rule: its session got nothing else.
			if p := prev(x.all, first); p != nil && clientStart(p) && !orphan[p] && startSource(p) != "compact" {
				fold(id, p)
				continue
			}
		}
		if o := forkOrphan(rs, preOnly); o != nil {
			fork(id, o)
			continue
		}
		if preOnly {
			if start := next(lx.starts, last); start != nil {
				fold(id, start)
			} else {
				l.phantom[id] = true
			}
		}
	}

	for id, to := range l.alias {
		for _, r := range ix.sessions[id].recs {
			r.session, r.alias = to, true
		}
	}
	return l
}
