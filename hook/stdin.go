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

// firstBufBytes is the buffer stdin is first read into.
const firstBufBytes = 16 << 10

// drainBufBytes is the buffer that discards what is beyond MaxPayloadBytes.
const drainBufBytes = 256 << 10

// errCutShort is the error of a payload that is not all there: larger than
// MaxPayloadBytes, or still arriving when the budget ran out.
var errCutShort = errors.New("payload not read whole")

// errBudget is what a read returns when the wait for the payload
// (Config.stdinWait) ran out before the writer closed stdin.
var errBudget = errors.New("stdin still open when the wait for the payload ran out")

// readPayload reads stdin up to MaxPayloadBytes, before deadline: a stdin
// left open (a writer that never closes it, `sleep 60 | hookwatch-hook`)
// costs the wait for the payload (Config.stdinWait), not more. What is beyond the bound is discarded, until
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
	res := readBefore(r, deadline)
	switch {
	case errors.Is(res.err, errBudget):
		return nil, fmt.Errorf("%w: %v", errCutShort, errBudget)
	case res.err != nil:
		return nil, fmt.Errorf("cannot read stdin: %w", res.err)
	case !res.whole:
		return nil, fmt.Errorf("%w: %d bytes, more than the %d the hook reads", errCutShort, res.n, MaxPayloadBytes)
	}
	if len(bytes.TrimSpace(res.data)) == 0 {
		return nil, errors.New("empty stdin: no hook payload")
	}
	if len(res.data) > 1<<20 {
		debug.SetMemoryLimit(memoryLimit)
	}
	return res.data, nil
}

// readResult is what reading stdin gave.
type readResult struct {
	data  []byte // the payload, when whole
	n     int64  // bytes read, the discarded ones included
	err   error
	whole bool // the writer closed stdin within the bound
}

// readBounded reads with read until end of file, keeping at most
// MaxPayloadBytes and discarding the rest.
func readBounded(read func([]byte) (int, error)) readResult {
	// Most payloads fit the first buffer. Not more: a buffer past 32 KiB
	// is a large object, whose first allocation costs the heap more work.
	buf := make([]byte, 0, firstBufBytes)
	var err error
	for len(buf) <= MaxPayloadBytes && err == nil {
		if len(buf) == cap(buf) {
			buf = append(make([]byte, 0, min(2*cap(buf), MaxPayloadBytes+1)), buf...)
		}
		var n int
		n, err = read(buf[len(buf):min(cap(buf), MaxPayloadBytes+1)])
		buf = buf[:len(buf)+n]
	}
	if err == io.EOF {
		return readResult{data: buf, n: int64(len(buf)), whole: true}
	}
	if err != nil {
		return readResult{err: err}
	}
	// Larger than the bound: drop it and discard the rest.
	n := int64(len(buf))
	buf = nil
	d := make([]byte, drainBufBytes)
	for err == nil {
		var m int
		m, err = read(d)
		n += int64(m)
	}
	if err != io.EOF {
		return readResult{err: err}
	}
	return readResult{n: n}
}

// readAside reads r with readBounded in a goroutine beside the caller,
// which stops waiting at the deadline: for a reader that cannot be told a
// deadline (readBefore's fallback).
func readAside(r io.Reader, deadline time.Time) readResult {
	// Buffered: a reader still blocked when the caller gives up must not
	// leak past its read (the process exits anyway).
	done := make(chan readResult, 1)
	go func() { done <- readBounded(r.Read) }()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case res := <-done:
		return res
	case <-timer.C:
		return readResult{err: errBudget}
	}
}
