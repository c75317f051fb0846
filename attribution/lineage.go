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

func startSource(r *record) string {
	if e, ok := r.p.Event.(*event.SessionStartInput); ok {
		return e.Source
	}
	return ""
}

// forkOf returns the parent the hook proved from the transcript of the
// fork whose records are rs (its SessionStart(fork) first): the ForkOf of
// the earliest SessionStart or SessionEnd of them that names one
// (event.Envelope.ForkOf), or "" when
// none does or it cannot be: a parent with records must be in the fork's
// group and have begun before it, so that lineage keeps no cycles whatever
// the envelopes claim. A parent without records is named all the same:
// its events were not captured, but the transcript proves it.
func forkOf(rs []*record, bySession map[string][]*record) string {
	start := rs[0]
	var parent string
	for _, r := range rs {
		// The hook reads it on these two only; any record of them relinks
		// a Group, so that a late finding is not missed.
		if r.name != event.SessionStart && r.name != event.SessionEnd {
			continue
		}
		if parent = r.env.ForkOf; parent != "" {
			break
		}
	}
	if parent == "" || parent == start.session {
		return ""
	}
	if ps := bySession[parent]; len(ps) > 0 && (ps[0].group != start.group || ps[0].seq > start.seq) {
		return ""
	}
	return parent
}

// linkSessions derives the lineage of the sessions in recs (in canonical
// order) and folds throwaway ids into their sessions by setting
// record.session and record.alias.
func linkSessions(recs []*record) *lineage {
	l := &lineage{
		alias: map[string]string{}, aliasAt: map[*record]string{}, parent: map[string]string{},
		kind: map[string]string{}, forkedTo: map[*record]string{}, forkFrom: map[string]*record{},
		phantom: map[string]bool{},
	}
	bySession := map[string][]*record{}
	var order []string // sessions by earliest record
	for _, r := range recs {
		if _, ok := bySession[r.session]; !ok {
			order = append(order, r.session)
		}
		bySession[r.session] = append(bySession[r.session], r)
	}

	orphan := map[*record]bool{}
	compactStartAfter := map[*record]bool{} // PreCompact followed by its session's SessionStart(compact)
	for _, id := range order {
		rs := bySession[id]
		var openPre []*record
		for i, r := range rs {
			switch r.name {
			case event.PreCompact:
				openPre = append(openPre, r)
			case event.SessionStart:
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
				for _, n := range rs[i+1:] {
					if n.name == event.SessionStart {
						break
					}
					if !preStart(n.name) {
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
	idx := map[string]*index{}
	for _, r := range recs {
		x := idx[r.group]
		if x == nil {
			x = &index{}
			idx[r.group] = x
		}
		x.all = append(x.all, r)
		switch {
		case orphan[r]:
			x.orphans = append(x.orphans, r)
		case r.name == event.SessionEnd:
			if e, ok := r.p.Event.(*event.SessionEndInput); ok && e.Reason == "clear" {
				x.clearEnds = append(x.clearEnds, r)
			}
		case r.name == event.PreCompact && !compactStartAfter[r]:
			x.preCompacts = append(x.preCompacts, r)
		}
		if r.name == event.SessionStart {
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
				if !preStart(r.name) {
					ref = r
					break
				}
			}
		}
		o := latest(idx[first.group].orphans, ref)
		if o == nil || bySession[o.session][0].seq > first.seq {
			return nil
		}
		return o
	}
	fork := func(id string, o *record) {
		used[o] = true
		l.parent[id], l.kind[id] = o.session, LineageFork
		l.forkedTo[o], l.forkFrom[id] = id, o
	}

	for _, id := range order {
		rs := bySession[id]
		first, last := rs[0], rs[len(rs)-1]
		x := idx[first.group]
		if first.name == event.SessionStart {
			switch startSource(first) {
			case "clear":
				if ev := latest(x.clearEnds, first); ev != nil {
					used[ev] = true
					l.parent[id], l.kind[id] = ev.session, LineageClear
				}
			case "fork":
				l.kind[id] = LineageFork
				if parent := forkOf(rs, bySession); parent != "" {
					l.parent[id] = parent
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
			if !preStart(r.name) {
				preOnly = false
				break
			}
		}
		lx := idx[last.group]
		if preOnly {
			if n := next(lx.all, last); n != nil && n.name == event.SessionStart {
				fold(id, n)
				continue
			}
			// The hooks of one client start run side by side, so the
			// throwaway's InstructionsLoaded can be read just after the
			// continued session's SessionStart. An orphan SessionStart is
			// left to the fork rule: its session got nothing else.
			if p := prev(x.all, first); p != nil && p.name == event.SessionStart && !orphan[p] && startSource(p) != "compact" {
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

	for _, r := range recs {
		if to, ok := l.alias[r.session]; ok {
			r.session, r.alias = to, true
		}
	}
	return l
}
