package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store"
)

// A stalled session (attribution.SignalStalled) is read from the clock,
// not only from the events, so it is never part of the stored model: the
// signals API reads it at request time (signals_api.go), and a sweep
// looks for it every Config.StallSweep to count it once on /metrics and
// tell the live stream. The modeler notes, as each round changes a
// session, the calls the session waits on (attribution.Waiting); the
// sweep asks attribution.Stalled of those at the clock's now. A stall
// clears when the session's next event arrives: its round notes what the
// session waits on then.
//
// The live stream carries a stall as
//
//	event: signals
//	id: <event seq>:<model seq>
//	data: {"session_id":…,"signals":[{"kind":"stalled",…}]}
//
// once, when the sweep first sees it, to the streams connected then (of
// that session, or of every session the stream's user may read). It is a
// notice to read GET /v1/sessions/{id}/signals again, which says whether
// the session is still stalled; the next event of the session is the
// notice that it is not.

// maxStallNotices bounds the stall notices kept for streams that have
// not sent them yet; a stream further behind misses the older ones.
const maxStallNotices = 1024

// waitingSession is what the sweep keeps of a session that waits on
// calls: its summary and those calls (attribution.Waiting, read when its
// round noted it), copies of the model's.
type waitingSession struct {
	session *attribution.Session
	calls   []*attribution.ToolCall
	counted map[string]bool // stall keys (agent + key) counted and told
}

// stallNotice is one stall told to the live stream.
type stallNotice struct {
	seq     int64
	session string
	user    string
	data    []byte // the message's data: JSON
}

// stalls keeps the sessions that wait on calls and the notices of the
// stalls found among them.
type stalls struct {
	mu      sync.Mutex
	waiting map[string]*waitingSession
	notices []stallNotice
	seq     int64 // of the latest notice
	// noted are the sessions rounds noted while the stored ones are read
	// at start (seed), which must not undo them; nil after.
	noted map[string]bool
}

func newStalls() *stalls {
	return &stalls{waiting: map[string]*waitingSession{}, noted: map[string]bool{}}
}

// note records what session s, as a round of the model left it, waits
// on (attribution.Waiting); waiting is not kept.
func (st *stalls) note(s *attribution.Session, waiting []*attribution.ToolCall) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.noted != nil {
		st.noted[s.SessionID] = true
	}
	st.put(s, waiting)
}

// forget drops what every session waits on: a collector that no longer
// computes the model (a standby of a shared store) is told nothing more
// of them, and would take each for stalled at the threshold. The
// notices told stay.
func (st *stalls) forget() {
	st.mu.Lock()
	defer st.mu.Unlock()
	clear(st.waiting)
}

// put records what s waits on; st.mu is held.
func (st *stalls) put(s *attribution.Session, waiting []*attribution.ToolCall) {
	id := s.SessionID
	if len(waiting) == 0 {
		delete(st.waiting, id)
		return
	}
	ws := st.waiting[id]
	if ws == nil {
		if len(st.waiting) >= maxLive {
			return
		}
		ws = &waitingSession{counted: map[string]bool{}}
		st.waiting[id] = ws
	}
	sum := *s
	sum.Agents, sum.ToolCalls = nil, nil
	ws.session = &sum
	ws.calls = ws.calls[:0]
	for _, c := range waiting {
		cc := *c
		ws.calls = append(ws.calls, &cc)
	}
}

// seed notes what the stored model of the most recently active sessions
// (the listing's first page, with an event within a day) waits on, so that
// a session that stalled before the collector started is swept too. A
// session a round noted meanwhile is newer than what was read: it is kept.
// A store shared with other collectors is left to the rounds of the one
// that computes the model, which alone counts.
func (s *Server) seedStalls(ctx context.Context) error {
	defer func() {
		s.stalls.mu.Lock()
		s.stalls.noted = nil
		s.stalls.mu.Unlock()
	}()
	if _, shared := s.store.(store.Shared); shared {
		return nil
	}
	page, err := s.store.Sessions(ctx, store.SessionFilter{Limit: store.MaxLimit})
	if err != nil {
		return err
	}
	since := s.cfg.Now().Add(-24 * time.Hour)
	var ids []string
	for _, sess := range page.Sessions {
		if sess.LastEventAt.After(since) {
			ids = append(ids, sess.ID)
		}
	}
	models, err := s.store.SessionModels(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		m, ok := models[id]
		sess := decodeSummary(m.Summary)
		if !ok || m.AliasOf != "" || sess == nil || !sess.Live() {
			continue
		}
		pending, err := s.store.ToolCalls(ctx, store.ToolCallFilter{SessionID: id, Status: attribution.StatusPending, Limit: 1})
		if err != nil {
			return err
		}
		if len(pending.ToolCalls) == 0 {
			continue
		}
		// All of them: a later prompt's call leaves a pending one behind.
		calls, _, err := s.modeler.stored.calls(ctx, id, 0)
		if err != nil {
			return err
		}
		agents, err := s.modeler.stored.agents(ctx, id)
		if err != nil {
			return err
		}
		waiting := attribution.Waiting(sess, agents, calls)
		s.stalls.mu.Lock()
		if !s.stalls.noted[id] {
			s.stalls.put(sess, waiting)
		}
		s.stalls.mu.Unlock()
	}
	return nil
}

// since returns the notices after seq, and the latest seq.
func (st *stalls) since(seq int64) ([]stallNotice, int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []stallNotice
	for _, n := range st.notices {
		if n.seq > seq {
			out = append(out, n)
		}
	}
	return out, st.seq
}

// latest is the seq of the latest notice.
func (st *stalls) latest() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.seq
}

// sweep finds the stalls at now not seen before, counts each once in
// counter (nil: not counted), keeps a notice of them for the streams and
// reports whether there was any; user names a session's user.
func (st *stalls) sweep(ctx context.Context, now time.Time, th attribution.Thresholds, counter *metrics.Counter, user func(context.Context, string) string) bool {
	type found struct {
		session string
		sigs    []attribution.Signal
	}
	var fresh []found
	st.mu.Lock()
	for id, ws := range st.waiting {
		var sigs []attribution.Signal
		for _, sg := range attribution.StalledWaiting(ws.session, ws.calls, now, th) {
			k := sg.AgentID + "\x00" + sg.Key
			if !ws.counted[k] {
				ws.counted[k] = true
				sigs = append(sigs, sg)
			}
		}
		if len(sigs) > 0 {
			fresh = append(fresh, found{id, sigs})
		}
	}
	st.mu.Unlock()
	if len(fresh) == 0 {
		return false
	}
	notices := make([]stallNotice, 0, len(fresh))
	for _, f := range fresh {
		if counter != nil {
			counter.Add(len(f.sigs))
		}
		data, err := json.Marshal(struct {
			SessionID string               `json:"session_id"`
			Signals   []attribution.Signal `json:"signals"`
		}{f.session, f.sigs})
		if err != nil {
			continue
		}
		notices = append(notices, stallNotice{session: f.session, user: user(ctx, f.session), data: data})
	}
	st.mu.Lock()
	for _, n := range notices {
		st.seq++
		n.seq = st.seq
		st.notices = append(st.notices, n)
	}
	if over := len(st.notices) - maxStallNotices; over > 0 {
		st.notices = append(st.notices[:0], st.notices[over:]...)
	}
	st.mu.Unlock()
	return true
}

// sweepStalls reads the stored sessions' stalls (seedStalls), then runs
// the sweep every Config.StallSweep until ctx ends.
func (s *Server) sweepStalls(ctx context.Context) {
	if err := s.seedStalls(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("cannot read the stored sessions' stalls", "err", err)
	}
	t := time.NewTicker(s.cfg.StallSweep)
	defer t.Stop()
	var counter *metrics.Counter
	if s.modeler.perAgent != nil {
		counter = s.metrics.set.GetOrCreateCounter(`hookwatch_signals_total{kind="stalled"}`)
	}
	user := func(ctx context.Context, id string) string {
		sess, err := s.store.Session(ctx, id)
		if err != nil {
			return ""
		}
		return sess.User
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.stalls.sweep(ctx, s.cfg.Now(), s.cfg.Signals, counter, user) {
				s.hub.notify()
			}
		}
	}
}

// streamStalls sends, through send, the stall notices after *seq that a
// stream of session sessionID ("" for all) may show to users (nil: any),
// and advances *seq.
func (s *Server) streamStalls(sessionID string, users []string, pos streamPos, seq *int64, send func([]byte) error) error {
	notices, latest := s.stalls.since(*seq)
	*seq = latest
	var buf bytes.Buffer
	for _, n := range notices {
		if sessionID != "" && n.session != sessionID || users != nil && !slices.Contains(users, n.user) {
			continue
		}
		buf.Reset()
		buf.WriteString("event: signals\nid: ")
		buf.WriteString(pos.String())
		buf.WriteString("\ndata: ")
		buf.Write(n.data)
		buf.WriteString("\n\n")
		if err := send(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
