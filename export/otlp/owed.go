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

	"github.com/hookwatch/hookwatch/internal/atomicfile"
)

// debts are the sessions whose spans the live push owes the receiver: those
// it has queued and not delivered yet (in flight), and those it could not
// deliver (owed: dropped from a full queue, given up on after every retry,
// still queued when the collector stopped). Only ids and times are kept,
// a session once however many of its spans are owed: the spans are made
// again from the model's rows when they are sent (ExportSession), the way
// the stored export makes them, with the same ids.
//
// Both kinds are written to a file, the sessions in flight as owed: a
// collector killed with spans queued finds them owed at its restart. A
// session is written there as soon as it is added (Exporter.saver), and
// always before a request carries its spans; one whose
// spans were delivered is taken off at the next write, at the latest
// debtWriteEvery later (a kill in between sends it again: harmless, a
// receiver keys spans by id).
//
// The caller serialises access (Exporter.mu); only save does I/O.
type debts struct {
	path string
	max  int
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
	// added is set when a session was added since the last write (to be
	// written before the next request), removed when one was taken off.
	added, removed bool
	lastWrite      time.Time
	// full is set once a session was not kept for the bound.
	full bool
}

// debtWriteEvery bounds how often sessions taken off the debts alone make
// the file written again.
const debtWriteEvery = 5 * time.Second

// debtFile is the file's form.
type debtFile struct {
	Sessions map[string]time.Time `json:"sessions"`
}

// loadDebts reads the debts kept at path ("" keeps them in memory only).
// A file that cannot be read or decoded is an error, the debts empty.
func loadDebts(path string, max int) (*debts, error) {
	d := &debts{path: path, max: max, owed: map[string]time.Time{}, inflight: map[string]int{}, sending: map[string]bool{}}
	if path == "" {
		return d, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("cannot read the sessions owed to the OTLP receiver: %w", err)
	}
	var f debtFile
	if err := json.Unmarshal(b, &f); err != nil {
		return d, fmt.Errorf("cannot decode the sessions owed to the OTLP receiver in %s: %w", path, err)
	}
	for id, t := range f.Sessions {
		if len(d.owed) >= max {
			d.full = true
			break
		}
		d.owed[id] = t
	}
	d.kept = len(d.owed)
	return d, nil
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

// queue records one item of session id queued.
func (d *debts) queue(id string) {
	if !d.room(id) {
		return
	}
	if d.inflight[id] == 0 {
		if _, owed := d.owed[id]; !owed {
			d.added = true
			d.kept++
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
				d.removed = true
				d.kept--
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
		d.added = true
		d.kept++
	}
}

// resending records that session id is being sent again; paid or
// unpaid ends it.
func (d *debts) resending(id string) { d.sending[id] = false }

// unpaid records that sending session id again failed: owed still.
func (d *debts) unpaid(id string) { delete(d.sending, id) }

// paid takes session id off the owed, unless it was owed again while it
// was being sent (resending).
func (d *debts) paid(id string) {
	again := d.sending[id]
	delete(d.sending, id)
	if again {
		return
	}
	if _, ok := d.owed[id]; ok {
		delete(d.owed, id)
		if _, ok := d.inflight[id]; !ok {
			d.removed = true
			d.kept--
		}
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

// snapshot returns what save writes when the file is due: sessions added
// (or force), or sessions taken off and debtWriteEvery passed; nil when
// no write is due. It marks the debts written.
func (d *debts) snapshot(now time.Time, force bool) *debtFile {
	if d.path == "" {
		return nil
	}
	if !force && !d.added && !(d.removed && now.Sub(d.lastWrite) >= debtWriteEvery) {
		return nil
	}
	f := &debtFile{Sessions: make(map[string]time.Time, len(d.owed)+len(d.inflight))}
	for id := range d.inflight {
		f.Sessions[id] = now
	}
	for id, t := range d.owed {
		f.Sessions[id] = t
	}
	d.added, d.removed, d.lastWrite = false, false, now
	return f
}

// save writes f to path atomically (a file of its own renamed over it,
// synced first: a crash leaves the old list or the new one), readable by
// its owner only.
func save(path string, f *debtFile) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, b, atomicfile.Options{}); err != nil {
		return fmt.Errorf("cannot keep the sessions owed to the OTLP receiver: %w", err)
	}
	return nil
}
