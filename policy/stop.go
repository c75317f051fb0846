package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/hookwatch/hookwatch/decision"
	"github.com/hookwatch/hookwatch/internal/atomicfile"
)

// A stop on PreToolUse or PermissionRequest cannot end the run by itself.
// Claude Code 2.1.197 runs the call when the answer is only continue:false
// and stops afterwards, and it ignores continue:false when the same answer
// denies the call (both seen in internal/e2e). So the call is denied at once
// (decision.Render adds the deny) and the stop is carried to the agent's
// next PostToolBatch, which reports the denied call: continue:false there
// ends the run before the next model request.
//
// The carried stop lives in the State: one small file per session, agent and
// turn, <dir>/stop-<hash>.json, written only by the process that fired the
// stop and removed by the PostToolBatch that delivers it (or a map for a
// memory State). A PostToolBatch costs one failed open when there is none. A
// stop that waited longer than stopTTL (the client died before the batch) is
// dropped rather than ending a later, resumed run.
//
// The stop waits for a batch of the same turn (prompt_id). Clients from
// 2.1.332 honour continue:false next to the deny: the run ends there and
// sends no PostToolBatch, so a stop carried by session and agent alone ended
// the first batch of the session's next run (a resume), which nobody stopped.

// stopTTL bounds how long a carried stop waits for its PostToolBatch.
const stopTTL = 10 * time.Minute

// carriedStop is a stop waiting for its PostToolBatch.
type carriedStop struct {
	RuleIDs []string `json:"rule_ids"`
	Reason  string   `json:"reason"`
	At      int64    `json:"at"` // Unix ms
}

func stopKey(p map[string]any) string {
	return asString(p["session_id"]) + "\x00" + asString(p["agent_id"]) + "\x00" + asString(p["prompt_id"])
}

func (s *State) stopPath(key string) string {
	return filepath.Join(s.dir, "stop-"+digest([]byte(key))[:24]+".json")
}

// carryStop keeps a stop for the next PostToolBatch of the same session,
// agent and turn. Failing to keep it only loses the end of the run, never the deny.
func (s *State) carryStop(key string, c carriedStop) error {
	if s.dir == "" {
		s.mu.Lock()
		if s.stops == nil {
			s.stops = map[string]carriedStop{}
		}
		s.stops[key] = c
		s.mu.Unlock()
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	// Not synced: it is written on the hook's path, and a stop lost to a
	// crash of the machine is delivered by the next Stop anyway.
	return atomicfile.Write(s.stopPath(key), b, atomicfile.Options{NoSync: true})
}

// takeStop returns and forgets the stop carried for key, if any.
func (s *State) takeStop(key string, now time.Time) (carriedStop, bool) {
	var c carriedStop
	if s.dir == "" {
		s.mu.Lock()
		c, ok := s.stops[key]
		delete(s.stops, key)
		s.mu.Unlock()
		return c, ok && now.UnixMilli()-c.At < stopTTL.Milliseconds()
	}
	path := s.stopPath(key)
	b, err := os.ReadFile(path)
	if err != nil {
		return c, false
	}
	// Remove first: two batches must not both deliver it.
	if os.Remove(path) != nil || json.Unmarshal(b, &c) != nil {
		return c, false
	}
	return c, now.UnixMilli()-c.At < stopTTL.Milliseconds()
}

// carryStops keeps d's stop when it answers a permission event, and adds a
// carried stop to a PostToolBatch answer.
func (ev *evaluation) carryStops(d decision.Decision) decision.Decision {
	if ev.st == nil {
		return d
	}
	switch ev.name {
	case "PreToolUse", "PermissionRequest":
		if !d.Stop {
			return d
		}
		c := carriedStop{Reason: joinNonEmpty(d.StopReasons), At: ev.st.now().UnixMilli()}
		if c.Reason == "" {
			c.Reason = decision.DefaultStopReason
		}
		for _, n := range d.Notes {
			if n.Enforced && n.Action == decision.ActionStop {
				c.RuleIDs = append(c.RuleIDs, n.RuleID)
			}
		}
		if err := ev.st.carryStop(stopKey(ev.payload), c); err != nil {
			d.SystemMessages = append(d.SystemMessages, "hookwatch policy: the call is denied, but the run may go on: cannot keep the stop: "+err.Error())
		}
	case "PostToolBatch":
		c, ok := ev.st.takeStop(stopKey(ev.payload), ev.st.now())
		if !ok {
			return d
		}
		stop := decision.Decision{Event: ev.name, Stop: true, StopReasons: []string{c.Reason}}
		for _, id := range c.RuleIDs {
			stop.Notes = append(stop.Notes, decision.Note{RuleID: id, Action: decision.ActionStop, Reason: c.Reason, Enforced: true})
		}
		d = decision.Merge(d, stop)
	}
	return d
}

func joinNonEmpty(ss []string) string {
	out := ""
	for _, s := range ss {
		if s == "" {
			continue
		}
		if out != "" {
			out += "\n"
		}
		out += s
	}
	return out
}
