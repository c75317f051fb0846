package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hookwatch/hookwatch/internal/atomicfile"
)

// errLocked is lockFile's error when another process held the lock all
// the wait.
var errLocked = errors.New("locked by another process")

// State keeps quota counts between hook processes.
//
// Design: each `hookwatch hook` process is short-lived, and quotas must hold
// when the collector is down, so counts live in one small JSON file,
// <dir>/quota.json, next to a lock file, <dir>/quota.lock. An evaluation that
// reaches a quota rule takes an exclusive flock on the lock file (waiting at
// most lockWait), reads the counts, decides, and — only if the merged answer
// lets the call through — writes the new counts to a temporary file renamed
// over quota.json, then unlocks. Processes that meet no quota rule never
// touch the files. Each counter keeps its total and, for windowed quotas, the
// times of the last Limit calls (enough to tell whether Limit calls fall in
// the window), so the file stays small; counters unused for 30 days, and the
// least recently used beyond maxCounters, are dropped on write. A corrupt
// file is started afresh: quotas then count from zero (fail-open), never
// block the hook.
//
// A State is safe for concurrent use (the collector shares one), serialising
// evaluations that reach quota rules.
type State struct {
	dir string
	// Clock returns the current time; nil means time.Now. Tests and dry runs
	// set it.
	Clock func() time.Time

	mu   sync.Mutex
	data *stateData
	lock *os.File
	// stops are the carried stops of a memory State (see stop.go).
	stops map[string]carriedStop
}

// stateData is the quota.json document.
type stateData struct {
	Version  int                 `json:"version"`
	Counters map[string]*counter `json:"counters"`
}

// counter is one quota bucket.
type counter struct {
	N      int64   `json:"n"`           // calls counted, all time
	Seen   int64   `json:"seen"`        // last call, Unix ms
	Window int64   `json:"w,omitempty"` // window in ms, 0 = none
	Times  []int64 `json:"t,omitempty"` // last calls, Unix ms, oldest first (windowed only)
}

const (
	lockWait    = 500 * time.Millisecond
	counterTTL  = 30 * 24 * time.Hour
	maxCounters = 10000
)

// OpenState returns a State kept in files under dir (created on first use).
// Nothing is read until a quota rule needs it.
func OpenState(dir string) *State { return &State{dir: dir} }

// MemoryState returns a State kept in memory only (dry runs, tests, a
// long-running collector that owns its counts).
func MemoryState() *State { return &State{} }

func (s *State) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

// quotaHit is one counter an evaluation will bump if the call goes through.
type quotaHit struct {
	key    string
	window time.Duration
	keep   int
}

// begin locks the state and loads it.
func (s *State) begin() error {
	s.mu.Lock()
	if s.dir == "" {
		if s.data == nil {
			s.data = &stateData{Version: 1, Counters: map[string]*counter{}}
		}
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("cannot create quota state dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, "quota.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("cannot open quota lock: %w", err)
	}
	if err := lockFile(f, lockWait); err != nil {
		f.Close()
		s.mu.Unlock()
		return fmt.Errorf("cannot lock quota state: %w", err)
	}
	s.lock = f
	s.data = &stateData{Version: 1, Counters: map[string]*counter{}}
	b, err := os.ReadFile(filepath.Join(s.dir, "quota.json"))
	if err == nil {
		var d stateData
		if json.Unmarshal(b, &d) == nil && d.Counters != nil {
			s.data = &d
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		s.end(nil, false)
		return fmt.Errorf("cannot read quota state: %w", err)
	}
	return nil
}

// count returns how many calls the bucket holds within window (0: all time).
func (s *State) count(key string, window time.Duration, now time.Time) int64 {
	c := s.data.Counters[key]
	if c == nil {
		return 0
	}
	if window <= 0 {
		return c.N
	}
	from := now.Add(-window).UnixMilli()
	var n int64
	for _, t := range c.Times {
		if t > from {
			n++
		}
	}
	return n
}

// end applies hits (when commit is set), writes and unlocks.
func (s *State) end(hits []quotaHit, commit bool) error {
	defer s.mu.Unlock()
	var err error
	if commit && len(hits) > 0 {
		now := s.now()
		for _, h := range hits {
			c := s.data.Counters[h.key]
			if c == nil {
				c = &counter{}
				s.data.Counters[h.key] = c
			}
			c.N++
			c.Seen = now.UnixMilli()
			if h.window > 0 {
				c.Window = h.window.Milliseconds()
				c.Times = append(c.Times, now.UnixMilli())
				if keep := max(h.keep, 1); len(c.Times) > keep {
					c.Times = append(c.Times[:0], c.Times[len(c.Times)-keep:]...)
				}
			}
		}
		s.prune(now)
		if s.dir != "" {
			err = s.write()
		}
	}
	if s.lock != nil {
		unlockFile(s.lock)
		s.lock.Close()
		s.lock = nil
		s.data = nil // re-read next time: other processes write too
	}
	return err
}

func (s *State) prune(now time.Time) {
	cut := now.Add(-counterTTL).UnixMilli()
	for k, c := range s.data.Counters {
		// A windowed counter whose last call left the window counts nothing.
		if c.Seen < cut || (c.Window > 0 && c.Seen <= now.UnixMilli()-c.Window) {
			delete(s.data.Counters, k)
		}
	}
	if len(s.data.Counters) <= maxCounters {
		return
	}
	keys := make([]string, 0, len(s.data.Counters))
	for k := range s.data.Counters {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return s.data.Counters[keys[i]].Seen < s.data.Counters[keys[j]].Seen })
	for _, k := range keys[:len(keys)-maxCounters] {
		delete(s.data.Counters, k)
	}
}

func (s *State) write() error {
	b, err := json.Marshal(s.data)
	if err != nil {
		return fmt.Errorf("cannot encode quota state: %w", err)
	}
	// Not synced: the counts are written on the hook's path, at every
	// call a quota counts, where an fsync would cost more than the last
	// counts lost to a crash of the machine.
	if err := atomicfile.Write(filepath.Join(s.dir, "quota.json"), b, atomicfile.Options{NoSync: true}); err != nil {
		return fmt.Errorf("cannot write quota state: %w", err)
	}
	return nil
}

// Counts returns a copy of the current all-time counts per bucket key
// ("<rule id>|session=…|tool=…"), for diagnostics and tests.
func (s *State) Counts() (map[string]int64, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(s.data.Counters))
	for k, c := range s.data.Counters {
		out[k] = c.N
	}
	return out, s.end(nil, false)
}

// quotaKey is the bucket of a quota rule for this payload.
//
// An agent is an agent of one session: the main agent has no agent_id in
// any session, and a subagent's id is only known to be unique within its
// session. So the agent dimension is "agent=<session_id>/<agent_id>": each
// session's main agent, and each subagent instance, has its own bucket.
// (Before, it was "agent=<agent_id>", one bucket for the main agents of
// every session; such buckets are no longer read, and are dropped like any
// unused bucket, after 30 days or once their window has passed.)
func quotaKey(r *Rule, p map[string]any) string {
	var b strings.Builder
	b.WriteString(r.ID)
	for _, dim := range r.Quota.Per {
		field := map[string]string{"session": "session_id", "tool": "tool_name", "agent_type": "agent_type", "agent": "agent_id"}[dim]
		b.WriteString("|")
		b.WriteString(dim)
		b.WriteString("=")
		if dim == "agent" {
			b.WriteString(asString(p["session_id"]))
			b.WriteString("/")
		}
		b.WriteString(asString(p[field]))
	}
	return b.String()
}

// quota reports whether the rule's bucket is exhausted, and remembers the
// bucket so that finishQuota counts this call if it goes through.
func (ev *evaluation) quota(r *Rule) (bool, error) {
	if ev.st == nil {
		return false, errors.New("no quota state available")
	}
	if !ev.quotaOpen {
		if err := ev.st.begin(); err != nil {
			return false, err
		}
		ev.quotaOpen = true
		ev.now = ev.st.now()
	}
	key := quotaKey(r, ev.payload)
	n := ev.st.count(key, time.Duration(r.Quota.Window), ev.now)
	ev.hits = append(ev.hits, quotaHit{key: key, window: time.Duration(r.Quota.Window), keep: r.Quota.Limit})
	return n >= int64(r.Quota.Limit), nil
}

// finishQuota counts the call in every bucket it reached if it goes through.
func (ev *evaluation) finishQuota(commit bool) {
	if !ev.quotaOpen {
		return
	}
	ev.quotaOpen = false
	if err := ev.st.end(ev.hits, commit); err != nil {
		ev.warnings = append(ev.warnings, err.Error())
	}
}
