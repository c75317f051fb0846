package demo

import (
	"bytes"
	"fmt"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// The 2.1.197 capture (testdata/payloads/claude-code-2.1.197.jsonl) whose
// payloads FanOut and Stalled take: its session, its Explore subagent, the
// call that spawned it and the Bash call it made, and the main agent's
// failing go vet.
const (
	captureSession = "0e2e0b5d-7136-4322-8086-c38ed16b10ad"
	captureExplore = "a43b7af849cd70f20"
	captureSpawn   = "toolu_00000013"
	captureSubCall = "toolu_00000020"
	captureVet     = "toolu_00000009"
)

// shapes finds payloads of a capture by event name and a string they hold.
type shapes [][]byte

func (s shapes) find(name, holding string) ([]byte, error) {
	for _, l := range s {
		if bytes.Contains(l, []byte(`"hook_event_name":"`+name+`"`)) && bytes.Contains(l, []byte(holding)) {
			return l, nil
		}
	}
	return nil, fmt.Errorf("the capture has no %s holding %q", name, holding)
}

// session makes envelopes of session id from the capture's payloads, a
// second apart from start, each with some strings replaced.
type session struct {
	shapes
	id    string
	start time.Time
	out   []event.Envelope
	err   error
}

func newSession(capture []byte, id string, start time.Time) *session {
	return &session{shapes: bytes.Split(capture, []byte("\n")), id: id, start: start}
}

func (s *session) add(name, holding string, repl ...string) {
	if s.err != nil {
		return
	}
	p, err := s.find(name, holding)
	if err != nil {
		s.err = err
		return
	}
	repl = append(repl, captureSession, s.id)
	for i := 0; i+1 < len(repl); i += 2 {
		p = bytes.ReplaceAll(p, []byte(repl[i]), []byte(repl[i+1]))
	}
	n := len(s.out)
	s.out = append(s.out, envelope("s-"+s.id, s.start.Add(time.Duration(n)*time.Second), n, p, nil))
}

// FanOut returns session id made of the 2.1.197 capture's payloads
// (capture: its JSONL): its main agent spawns an Explore subagent per
// count in turn (the capture's spawn, start, stop and spawn result), which
// runs the capture's Bash call that many times; events are a second apart
// from start. The subagents are "a" and 16 hex digits from agentBase+1 on,
// their spawning calls toolu_spawnNN and their calls toolu_NN_CCC, NN from
// agentBase: give each session its own base.
func FanOut(capture []byte, id string, agentBase int, start time.Time, counts ...int) ([]event.Envelope, error) {
	s := newSession(capture, id, start)
	s.add(event.SessionStart, `"source":"startup"`)
	s.add(event.UserPromptSubmit, captureSession)
	for i, n := range counts {
		k := agentBase + i
		sub := []string{captureExplore, fmt.Sprintf("a%016x", k+1), captureSpawn, fmt.Sprintf("toolu_spawn%02d", k)}
		s.add(event.PreToolUse, captureSpawn, sub...)
		s.add(event.SubagentStart, captureExplore, sub...)
		for c := range n {
			call := append([]string{captureSubCall, fmt.Sprintf("toolu_%02d_%03d", k, c)}, sub...)
			s.add(event.PreToolUse, captureSubCall, call...)
			s.add(event.PostToolUse, captureSubCall, call...)
		}
		s.add(event.SubagentStop, captureExplore, sub...)
		s.add(event.PostToolUse, captureSpawn, sub...)
	}
	return s.out, s.err
}

// Stalled returns session id made of the 2.1.197 capture's payloads: it
// starts, takes a prompt and starts the capture's go vet (toolu_00000009),
// whose outcome never comes; events are a second apart from start.
func Stalled(capture []byte, id string, start time.Time) ([]event.Envelope, error) {
	s := newSession(capture, id, start)
	s.add(event.SessionStart, `"source":"startup"`)
	s.add(event.UserPromptSubmit, captureSession)
	s.add(event.PreToolUse, captureVet)
	return s.out, s.err
}

// StalledCall is the call Stalled's session waits on.
const StalledCall = captureVet

// StalledOutcome returns, for Stalled's session id, the capture's outcome
// of the call it waits on (PostToolUseFailure), at at.
func StalledOutcome(capture []byte, id string, at time.Time) (event.Envelope, error) {
	s := newSession(capture, id, at)
	s.add(event.PostToolUseFailure, captureVet)
	if s.err != nil {
		return event.Envelope{}, s.err
	}
	return s.out[0], nil
}
