package bench

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// lagProbes measure the derived lag of a PostgreSQL run from outside the
// collectors: every lagProbeEvery the last event a developer had
// acknowledged is taken as a probe, and the database is polled until the
// model row of its session reflects it (model_sessions.seq, the session's
// derived_seq, at or past the event's seq). The lag is from the
// acknowledgement to the poll that saw it, so it is exact within
// lagPollEvery and counts every wait: the holder's, a takeover's, a load's.
type lagProbes struct {
	conn   *pgx.Conn
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu       sync.Mutex
	last     time.Time // when the last probe was taken
	open     []*lagProbe
	closed   []*lagProbe
	killedAt time.Time
	// firstWrite is when a poll first saw a model row written after the
	// kill: the new lease holder's first round stored.
	firstWrite time.Time
}

// lagGoal is the derived lag the team server is to keep below (p99).
const lagGoal = time.Second

// Failover is where the time after a kill goes: how long until the
// survivor's first round as lease holder stored its rows, and the probes
// acknowledged after the kill whose lag was lagGoal or more, the first and
// the last of them how long after the kill (the takeover's, or later).
type Failover struct {
	FirstWrite          time.Duration
	Slow                int
	FirstSlow, LastSlow time.Duration
}

type lagProbe struct {
	id, session string
	acked       time.Time
	lag         time.Duration
}

const (
	lagProbeEvery = 100 * time.Millisecond
	lagPollEvery  = 25 * time.Millisecond
)

func startLagProbes(ctx context.Context, url string) (*lagProbes, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithCancel(ctx)
	p := &lagProbes{conn: conn, cancel: cancel, done: make(chan struct{})}
	go p.poll(pctx)
	return p, nil
}

// offer takes the event just acknowledged as a probe if one is due.
func (p *lagProbes) offer(id, session string) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.last) < lagProbeEvery {
		return
	}
	p.last = now
	p.open = append(p.open, &lagProbe{id: id, session: session, acked: now})
}

// killed records when a collector was killed: probes acknowledged since
// count as after the kill.
func (p *lagProbes) killed(at time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.killedAt = at
	p.mu.Unlock()
}

func (p *lagProbes) poll(ctx context.Context) {
	defer close(p.done)
	for ctx.Err() == nil {
		time.Sleep(lagPollEvery)
		p.check(ctx)
	}
}

// check polls the database once for the open probes, and after a kill
// for the new holder's first write.
func (p *lagProbes) check(ctx context.Context) {
	p.mu.Lock()
	open := slices.Clone(p.open)
	killed, written := p.killedAt, !p.firstWrite.IsZero()
	p.mu.Unlock()
	if !killed.IsZero() && !written {
		// A model row's updated_seq is its round's version, at least the
		// round's start in Unix µs: one written after the kill is the new
		// holder's (the killed one's rounds began before it).
		var latest int64
		if p.conn.QueryRow(ctx, `SELECT coalesce(max(updated_seq), 0) FROM model_sessions`).Scan(&latest) == nil && latest >= killed.UnixMicro() {
			now := time.Now()
			p.mu.Lock()
			p.firstWrite = now
			p.mu.Unlock()
		}
	}
	if len(open) == 0 {
		return
	}
	ids := make([][]byte, len(open))
	for i, o := range open {
		ids[i] = []byte(o.id)
	}
	rows, err := p.conn.Query(ctx, `SELECT e.id, e.seq <= coalesce(m.seq, 0) FROM events e
		LEFT JOIN model_sessions m ON m.session_id = e.session_id WHERE e.id = ANY($1::bytea[])`, ids)
	if err != nil {
		return
	}
	now := time.Now()
	done := map[string]bool{}
	for rows.Next() {
		var id []byte
		var applied bool
		if rows.Scan(&id, &applied) == nil && applied {
			done[string(id)] = true
		}
	}
	rows.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open = slices.DeleteFunc(p.open, func(o *lagProbe) bool {
		if done[o.id] {
			o.lag = now.Sub(o.acked)
			p.closed = append(p.closed, o)
			return true
		}
		return false
	})
}

// figures polls once more (call it once the model caught up), stops, and
// returns the lag before the kill, after it and over the whole run, and
// where the time after the kill went. A probe still open counts the time
// until now.
func (p *lagProbes) figures(ctx context.Context) ([3]LagFigures, Failover) {
	p.cancel()
	<-p.done
	p.check(ctx)
	p.stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for _, o := range p.open {
		o.lag = now.Sub(o.acked)
		p.closed = append(p.closed, o)
	}
	p.open = nil
	var parts [3][]time.Duration
	var f Failover
	if !p.killedAt.IsZero() && !p.firstWrite.IsZero() {
		f.FirstWrite = p.firstWrite.Sub(p.killedAt)
	}
	for _, o := range p.closed {
		i := 0
		if !p.killedAt.IsZero() && !o.acked.Before(p.killedAt) {
			i = 1
			if at := o.acked.Sub(p.killedAt); o.lag >= lagGoal {
				if f.Slow == 0 || at < f.FirstSlow {
					f.FirstSlow = at
				}
				f.Slow++
				f.LastSlow = max(f.LastSlow, at)
			}
		}
		parts[i] = append(parts[i], o.lag)
		parts[2] = append(parts[2], o.lag)
	}
	var out [3]LagFigures
	for i, l := range parts {
		slices.Sort(l)
		out[i] = LagFigures{N: len(l), P50: quantile(l, 0.5), P99: quantile(l, 0.99)}
	}
	return out, f
}

// stop ends the polling and closes the connection; it may be called
// more than once.
func (p *lagProbes) stop() {
	p.once.Do(func() {
		p.cancel()
		<-p.done
		p.conn.Close(context.Background())
	})
}
