package hook

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"
)

// MaxPayloadBytes bounds what the hook reads from stdin. Real payloads are
// a few KiB; the agents cap tool output (Claude Code keeps 30,000
// characters of a command's output and ~25,000 tokens of a file or an MCP
// result), so only a large written file comes near it. The bound keeps the
// hook's memory under 64 MiB whatever it is sent: decoding, redacting and
// encoding a payload costs a few times its size.
const MaxPayloadBytes = 8 << 20

// memoryLimit is the soft memory limit of a hook that read a large
// payload: the garbage of decoding it is collected before the heap grows
// past it, rather than at twice the live heap.
const memoryLimit = 48 << 20

// drainBufBytes is the buffer that discards what is beyond MaxPayloadBytes.
const drainBufBytes = 256 << 10

// errCutShort is the error of a payload that is not all there: larger than
// MaxPayloadBytes, or still arriving when the budget ran out.
var errCutShort = errors.New("payload not read whole")

// readPayload reads stdin up to MaxPayloadBytes, before deadline. The read
// runs beside the caller, which stops waiting at the deadline: a stdin
// left open (an agent that never closes it, `sleep 6 | hookwatch-hook`)
// costs the budget, not more. What is beyond the bound is discarded, until
// the writer closes or the deadline passes, so that the agent does not
// block on a full pipe.
//
// A payload cut short is not recorded: JSON cut anywhere does not parse,
// and a record made of guesses (an event name found in the first bytes)
// would enter the session as an event that did not happen the way it says.
// The loss is logged to hook.log, which doctor reads.
func readPayload(r io.Reader, deadline time.Time) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no stdin")
	}
	type result struct {
		data  []byte
		n     int64 // bytes read, the discarded ones included
		err   error
		whole bool
	}
	// Buffered: a reader still blocked when the caller gives up must not
	// leak past its read (the process exits anyway).
	done := make(chan result, 1)
	go func() {
		buf := make([]byte, 0, 64<<10)
		var err error
		for len(buf) <= MaxPayloadBytes && err == nil {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			var n int
			n, err = r.Read(buf[len(buf):min(cap(buf), MaxPayloadBytes+1)])
			buf = buf[:len(buf)+n]
		}
		if err == io.EOF {
			done <- result{data: buf, n: int64(len(buf)), whole: true}
			return
		}
		if err != nil {
			done <- result{err: fmt.Errorf("cannot read stdin: %w", err)}
			return
		}
		// Larger than the bound: drop it and discard the rest.
		n := int64(len(buf))
		buf = nil
		d := make([]byte, drainBufBytes)
		for err == nil {
			var m int
			m, err = r.Read(d)
			n += int64(m)
		}
		done <- result{n: n}
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, res.err
		}
		if !res.whole {
			return nil, fmt.Errorf("%w: %d bytes, more than the %d the hook reads", errCutShort, res.n, MaxPayloadBytes)
		}
		if len(bytes.TrimSpace(res.data)) == 0 {
			return nil, errors.New("empty stdin: no hook payload")
		}
		if len(res.data) > 1<<20 {
			debug.SetMemoryLimit(memoryLimit)
		}
		return res.data, nil
	case <-timer.C:
		return nil, fmt.Errorf("%w: stdin still open when the budget ran out", errCutShort)
	}
}
