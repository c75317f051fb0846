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
	groups := map[string][]*record{}
	for _, r := range recs {
		if _, ok := bySession[r.session]; !ok {
			order = append(order, r.session)
		}
		bySession[r.session] = append(bySession[r.session], r)
		groups[r.group] = append(groups[r.group], r)
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

	used := map[*record]bool{}
	// before returns the records of group g that precede seq, latest first.
	before := func(g string, seq int, yield func(*record) bool) {
		rs := groups[g]
		i := sort.Search(len(rs), func(i int) bool { return rs[i].seq >= seq })
		for i--; i >= 0; i-- {
			if !yield(rs[i]) {
				return
			}
		}
	}
	// after returns the records of group g that follow seq, earliest first.
	after := func(g string, seq int, yield func(*record) bool) {
		rs := groups[g]
		for i := sort.Search(len(rs), func(i int) bool { return rs[i].seq > seq }); i < len(rs); i++ {
			if !yield(rs[i]) {
				return
			}
		}
	}
	latestOrphan := func(first *record, id string) *record {
		var found *record
		before(first.group, first.seq, func(r *record) bool {
			if r.session != id && orphan[r] && !used[r] {
				found = r
				return false
			}
			return true
		})
		return found
	}
	fold := func(id string, into *record) {
		l.alias[id] = into.session
		if _, ok := l.aliasAt[into]; !ok {
			l.aliasAt[into] = id
		}
	}

	for _, id := range order {
		rs := bySession[id]
		first, last := rs[0], rs[len(rs)-1]
		if first.name == event.SessionStart {
			var ev *record
			switch startSource(first) {
			case "clear":
				before(first.group, first.seq, func(r *record) bool {
					if e, ok := r.p.Event.(*event.SessionEndInput); ok && e.Reason == "clear" && r.session != id && !used[r] {
						ev = r
						return false
					}
					return true
				})
				if ev != nil {
					l.parent[id], l.kind[id] = ev.session, LineageClear
				}
			case "fork":
				l.kind[id] = LineageFork
				if ev = latestOrphan(first, id); ev != nil {
					l.parent[id] = ev.session
					l.forkedTo[ev], l.forkFrom[id] = id, ev
				}
			case "compact":
				before(first.group, first.seq, func(r *record) bool {
					if r.name == event.PreCompact && r.session != id && !used[r] && !compactStartAfter[r] {
						ev = r
						return false
					}
					return true
				})
				if ev != nil {
					l.parent[id], l.kind[id] = ev.session, LineageCompact
				}
			}
			if ev != nil {
				used[ev] = true
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
		if preOnly {
			var next *record
			after(last.group, last.seq, func(r *record) bool {
				if r.session == id {
					return true
				}
				next = r
				return false
			})
			if next != nil && next.name == event.SessionStart {
				fold(id, next)
				continue
			}
		}
		if o := latestOrphan(first, id); o != nil {
			used[o] = true
			l.parent[id], l.kind[id] = o.session, LineageFork
			l.forkedTo[o], l.forkFrom[id] = id, o
			continue
		}
		if preOnly {
			var start *record
			after(last.group, last.seq, func(r *record) bool {
				if r.session != id && r.name == event.SessionStart {
					start = r
					return false
				}
				return true
			})
			if start != nil {
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
