package store

import (
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// SessionDelta is what one insert batch adds to one session's summary. Every
// backend computes it with Summarize and merges it into its stored summary
// with the rules documented on each field, so that all backends agree on what
// a session looks like.
type SessionDelta struct {
	ID string
	// Runtime, Host and User are the first non-empty values in the batch;
	// the merge keeps a stored non-empty value.
	Runtime, Host, User string
	// FirstEventAt and LastEventAt bound the batch's event times; the merge
	// takes the minimum and maximum.
	FirstEventAt, LastEventAt time.Time
	// CWD and TranscriptPath are the latest non-empty values by event time
	// within the batch. The merge takes a value when the stored one is
	// empty, or when LastEventAt is not older than the stored last event
	// time.
	CWD, TranscriptPath string
	// Count is the number of events the batch stored, not counting the
	// records read from Codex rollouts (event.KindRollout) and Claude
	// Code transcripts (event.KindTranscript): they are evidence of calls,
	// prompts and agents the hooks may have reported too, not events of
	// the session, as the session model counts them (attribution's
	// Counts.Events). The merge adds it.
	Count int64
	// LastSeq is the largest Seq of the batch; the merge takes the maximum.
	LastSeq int64
}

// Summarize folds the stored events of one insert batch (Seq != 0, the
// skipped duplicates excluded) into one delta per session id, in order of
// first appearance. Events without a session id belong to no session.
func Summarize(events []Event) []SessionDelta {
	var out []SessionDelta
	index := map[string]int{}
	for i := range events {
		e := &events[i]
		if e.Seq == 0 || e.SessionID == "" {
			continue
		}
		j, ok := index[e.SessionID]
		if !ok {
			j = len(out)
			index[e.SessionID] = j
			out = append(out, SessionDelta{
				ID:           e.SessionID,
				Runtime:      e.Runtime,
				Host:         e.Facts.Host,
				User:         e.Facts.User,
				FirstEventAt: e.Time,
				LastEventAt:  e.Time,
			})
		}
		d := &out[j]
		if !event.IsEvidence(e.Kind) {
			d.Count++
		}
		d.LastSeq = max(d.LastSeq, e.Seq)
		if e.Time.Before(d.FirstEventAt) {
			d.FirstEventAt = e.Time
		}
		latest := !e.Time.Before(d.LastEventAt)
		if latest {
			d.LastEventAt = e.Time
		}
		set := func(dst *string, v string) {
			if v != "" && (latest || *dst == "") {
				*dst = v
			}
		}
		fill := func(dst *string, v string) {
			if *dst == "" {
				*dst = v
			}
		}
		fill(&d.Runtime, e.Runtime)
		fill(&d.Host, e.Facts.Host)
		fill(&d.User, e.Facts.User)
		set(&d.CWD, e.Facts.CWD)
		set(&d.TranscriptPath, e.Facts.TranscriptPath)
	}
	return out
}
