package attribution

import (
	"cmp"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/stale"
)

// RecordedFiles returns the files the calls read or wrote (their
// classify.Meta FilesRead and FilesWritten) with the state the hook
// recorded the last time one of them did (ToolCall.FileStates), most
// recently touched first, at most limit of them (0: no limit): what the
// stale-context guard checks at a resume. calls must be in the order they
// ran (a lineage's sessions root first, each session's calls by start).
//
// A file whose last write came from a call that recorded no state (a shell
// command that writes it: only Read, Write, Edit, MultiEdit and
// NotebookEdit record one) is left out: how the session left it is
// unknown, so a change since cannot be told from the session's own. Files
// with no recorded state at all are left out likewise. Wrote is set for a
// file any successful call wrote.
func RecordedFiles(calls []*ToolCall, limit int) []stale.Recorded {
	type file struct {
		rec  stale.Recorded
		last int // index of the latest call that touched it
		ok   bool
	}
	files := map[string]*file{}
	for i, c := range calls {
		done := c.Status == StatusOK
		touch := func(p string, wrote bool) *file {
			f := files[p]
			if f == nil {
				f = &file{rec: stale.Recorded{}}
				f.rec.Path = p
				files[p] = f
			}
			f.last = i
			f.rec.Wrote = f.rec.Wrote || wrote && done
			return f
		}
		for _, p := range c.FilesRead {
			touch(p, false)
		}
		for _, p := range c.FilesWritten {
			f := touch(p, true)
			if done {
				f.ok = false // until a state of this call says otherwise
			}
		}
		for _, st := range c.FileStates {
			if f := files[st.Path]; f != nil && f.last == i {
				f.rec.FileState, f.ok = st, true
			}
		}
	}
	out := make([]*file, 0, len(files))
	for _, f := range files {
		if f.ok {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *file) int { return cmp.Or(b.last-a.last, strings.Compare(a.rec.Path, b.rec.Path)) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	recs := make([]stale.Recorded, len(out))
	for i, f := range out {
		recs[i] = f.rec
	}
	return recs
}
