package otlp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// debts are the sessions whose spans the live push owes the receiver: those
// it has queued and not delivered yet (in flight), and those it could not
// deliver (owed: dropped from a full queue, given up on after every retry,
// still queued when the collector stopped). Only ids and times are kept,
// a session once however many of its spans are owed: the spans are made
// again from the model's rows when they are sent (ExportSession), the way
// the stored export makes them, with the same ids.
//
// Both kinds are recorded in the store (store.OTLPDebtStore), as this
// exporter's (owner's): a collector killed with spans queued leaves them
// there, where it finds them at its restart, or another collector on the
// database does. A session is recorded as soon as it is added
// (Exporter.saver), and always before a request carries its spans; one
// whose spans were delivered is taken off at the next write, at the latest
// debtWriteEvery later (a kill in between sends it again: harmless, a
// receiver keys spans by id). The records of other owners are read
// (adopt), owed here too, and taken off as they were read once paid.
//
// The caller serialises access (Exporter.mu); the Exporter does the I/O.
type debts struct {
	// persist is set when the debts are recorded in a store.
	persist bool
	max     int
	// owed maps a session to when its spans first were owed.
	owed map[string]time.Time
	// inflight counts a session's items queued or in a request.
	inflight map[string]int
	// kept is the number of sessions in owed or inflight (or both).
	kept int
	// sending holds the sessions being sent again, true for one owed
	// again meanwhile: spans lost after the rows were read are not paid
	// by that sending.
	sending map[string]bool
	// put are the sessions to record at the next write (newly in flight,
	// or newly owed), with since when; clear those of this owner to take
	// off (no longer kept).
	put       map[string]time.Time
	clear     map[string]bool
	lastWrite time.Time
	// others are the records of other owners read (adopt), by session:
	// what paying the session takes off the store.
	others map[string][]store.OTLPDebt
	// full is set once a session was not kept for the bound.
	full bool
}

// debtWriteEvery bounds how often sessions taken off the debts alone make
// the store written.
const debtWriteEvery = 5 * time.Second

func newDebts(max int, persist bool) *debts {
	return &debts{persist: persist, max: max, owed: map[string]time.Time{}, inflight: map[string]int{},
		sending: map[string]bool{}, put: map[string]time.Time{}, clear: map[string]bool{},
		others: map[string][]store.OTLPDebt{}}
}

// beatSession is the session of an owner's record of itself (its beat):
// Touched says when it last said it runs. Its Since is beatSince, which
// lists it before the owner's sessions.
const beatSession = ""

var beatSince = time.Unix(0, 1)

// adopt owes the sessions of the records of other owners read from the
// store (the longest owed first), as long as there is room, but for those
// of an owner that runs (its beat touched within stale of now): each pays
// what it owes itself, and the sessions it has in flight, which it does
// not owe, would be sent twice. Rows of owner (this exporter's own) are
// skipped, what it keeps of its own being in memory, but at the first read
// (first): those a collector of the same name left (the same home,
// restarted) are owed at once. The records of each session replace those
// read before.
func (d *debts) adopt(rows []store.OTLPDebt, owner string, now time.Time, stale time.Duration, first bool) {
	clear(d.others)
	running := map[string]bool{}
	for _, r := range rows {
		if r.SessionID == beatSession && now.Sub(r.Touched) < stale {
			running[r.Owner] = true
		}
	}
	for _, r := range rows {
		if r.SessionID == beatSession || r.Owner == owner && !first || r.Owner != owner && running[r.Owner] {
			continue
		}
		if _, ok := d.owed[r.SessionID]; !ok {
			if !d.room(r.SessionID) {
				continue
			}
			if _, ok := d.inflight[r.SessionID]; !ok {
				d.kept++
			}
			d.owed[r.SessionID] = r.Since
		} else if r.Since.Before(d.owed[r.SessionID]) {
			d.owed[r.SessionID] = r.Since
		}
		d.others[r.SessionID] = append(d.others[r.SessionID], r)
	}
}

// keep records session id kept from now on: to be recorded, no more to
// be cleared.
func (d *debts) keep(id string, since time.Time) {
	d.kept++
	d.put[id] = since
	delete(d.clear, id)
}

// unkeep records session id no longer kept: to be cleared.
func (d *debts) unkeep(id string) {
	d.kept--
	delete(d.put, id)
	d.clear[id] = true
}

// room reports whether session id is kept or can be; it sets full when
// it cannot.
func (d *debts) room(id string) bool {
	if _, ok := d.owed[id]; ok {
		return true
	}
	if _, ok := d.inflight[id]; ok {
		return true
	}
	if d.kept < d.max {
		return true
	}
	d.full = true
	return false
}

// queue records one item of session id queued at now.
func (d *debts) queue(id string, now time.Time) {
	if !d.room(id) {
		return
	}
	if d.inflight[id] == 0 {
		if _, owed := d.owed[id]; !owed {
			d.keep(id, now)
		}
	}
	d.inflight[id]++
}

// settle records one item of session id delivered (or refused for what
// it is: sending it again would not help), or, with lost, not delivered.
func (d *debts) settle(id string, lost bool, now time.Time) {
	if n, ok := d.inflight[id]; ok {
		if n <= 1 {
			delete(d.inflight, id)
			if _, owed := d.owed[id]; !owed {
				d.unkeep(id)
			}
		} else {
			d.inflight[id] = n - 1
		}
	}
	if lost {
		d.owe(id, now)
	}
}

// owe records session id as owed since now, unless it was already.
func (d *debts) owe(id string, now time.Time) {
	if _, ok := d.sending[id]; ok {
		d.sending[id] = true
	}
	if _, ok := d.owed[id]; ok || !d.room(id) {
		return
	}
	d.owed[id] = now
	if _, ok := d.inflight[id]; !ok {
		d.keep(id, now)
	} else {
		// Recorded while in flight; recorded again, so that a record
		// another collector took off when it paid the session is back.
		d.put[id] = now
	}
}

// resending records that session id is being sent again; paid or
// unpaid ends it.
func (d *debts) resending(id string) { d.sending[id] = false }

// unpaid records that sending session id again failed: owed still.
func (d *debts) unpaid(id string) { delete(d.sending, id) }

// paid takes session id off the owed, unless it was owed again while it
// was being sent (resending). It returns the records of other owners the
// sending paid, to take off the store.
func (d *debts) paid(id string) []store.OTLPDebt {
	again := d.sending[id]
	delete(d.sending, id)
	if again {
		return nil
	}
	if _, ok := d.owed[id]; ok {
		delete(d.owed, id)
		if _, ok := d.inflight[id]; !ok {
			d.unkeep(id)
		}
	}
	others := d.others[id]
	delete(d.others, id)
	return others
}

// behind keeps session id owed, as if since now: a session that cannot be
// read holds up none of the others.
func (d *debts) behind(id string, now time.Time) {
	delete(d.sending, id)
	if _, ok := d.owed[id]; ok {
		d.owed[id] = now
	}
}

// oldest returns up to n sessions owed, the longest owed first.
func (d *debts) oldest(n int) []string {
	ids := make([]string, 0, len(d.owed))
	for id := range d.owed {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := d.owed[a].Compare(d.owed[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return ids[:min(n, len(ids))]
}

// debtWrite is what one write of the debts records and clears.
type debtWrite struct {
	put   map[string]time.Time
	clear []string
}

// due returns the write to make when one is due: sessions to record (or
// force), or sessions to clear and debtWriteEvery passed; nil when none
// is due. It takes them from the debts: a write that fails gives them
// back (retry).
func (d *debts) due(now time.Time, force bool) *debtWrite {
	if !d.persist {
		return nil
	}
	if len(d.put) == 0 && len(d.clear) == 0 {
		return nil
	}
	if !force && len(d.put) == 0 && now.Sub(d.lastWrite) < debtWriteEvery {
		return nil
	}
	w := &debtWrite{put: d.put}
	for id := range d.clear {
		w.clear = append(w.clear, id)
	}
	d.put, d.clear, d.lastWrite = map[string]time.Time{}, map[string]bool{}, now
	return w
}

// retry gives back a write that failed, but for what changed meanwhile: a
// session recorded that is no longer kept, one cleared that is kept
// again.
func (d *debts) retry(w *debtWrite) {
	for id, t := range w.put {
		_, owed := d.owed[id]
		_, inflight := d.inflight[id]
		if _, again := d.put[id]; (owed || inflight) && !again && !d.clear[id] {
			d.put[id] = t
		}
	}
	for _, id := range w.clear {
		_, owed := d.owed[id]
		_, inflight := d.inflight[id]
		if _, again := d.put[id]; !owed && !inflight && !again {
			d.clear[id] = true
		}
	}
}

// owedFile is the form of the file in which collectors before the store
// kept the sessions they owed ($HOOKWATCH_HOME/otlp-owed.json).
type owedFile struct {
	Sessions map[string]time.Time `json:"sessions"`
}

// ReadOwedFile reads the sessions a file of collectors before the store
// kept as owed (session id → since when), for a caller to record them in
// the store once. A file that does not exist holds none.
func ReadOwedFile(path string) (map[string]time.Time, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the sessions owed to the OTLP receiver: %w", err)
	}
	var f owedFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("cannot decode the sessions owed to the OTLP receiver in %s: %w", path, err)
	}
	return f.Sessions, nil
}
