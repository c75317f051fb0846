package spool

import (
	"os"
	"sync"
	"sync/atomic"
)

// A Notifier tells the consumer of a spool that records were appended
// (Spool.Notify). It reads the platform's notifications only once armed, and
// once per Arm: a consumer that coalesces the appends of a burst, or is
// passing over the spool, is not woken by each of them meanwhile. Each
// wake-up of an idle process costs it far more than the notification
// itself (the Go runtime's monitor thread polls every 20 µs for a
// millisecond after one), and in an agent's session the hooks append one by
// one, a few milliseconds apart.
type Notifier struct {
	// C receives a value after Arm, once records were appended since the
	// last Discard (several appends may share one value).
	C <-chan struct{}

	out    chan struct{} // C
	arm    chan struct{} // takes Arm's token: the reader reads once per token
	armed  atomic.Bool   // a token is out, and the reader has not read since
	fd     int
	f      *os.File
	mu     sync.Mutex // Discard against the close at the end
	closed bool
	buf    []byte
}

// Arm has the Notifier send on C at the next append, or at once if there
// were appends since the last Discard that it did not tell yet. Arming an
// armed Notifier changes nothing.
func (n *Notifier) Arm() {
	if n.armed.CompareAndSwap(false, true) {
		n.arm <- struct{}{} // never blocks: the last token was taken
	}
}
