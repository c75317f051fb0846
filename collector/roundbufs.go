package collector

import (
	"bytes"
	"encoding/json"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store"
)

// roundBufs is the room a model round fills and the next one reuses: the
// envelopes handed to a Group (which copies them), the rows of the round's
// PutModel and their JSON documents (which PutModel does not keep). A round
// of a steady stream then allocates none of it: at 5,000 events/s that was
// ~0.9 KB per event for the garbage collector to reclaim. After a round
// larger than the room is kept for (a group loaded whole), the room goes.
type roundBufs struct {
	envs     []event.Envelope
	payloads []*event.Payload
	batch    store.ModelBatch
	// docs holds the documents of the round's rows, each a slice of its
	// bytes (never read, so written only past them); enc writes to it.
	docs bytes.Buffer
	enc  *json.Encoder
}

// maxKeptDocs bounds the documents' room roundBufs keeps between rounds;
// its other buffers are bounded as every buffer of the rounds (reuse).
const maxKeptDocs = 4 << 20

// doc returns v as JSON, as json.Marshal does, in the round's room: valid
// until the next round.
func (r *roundBufs) doc(v any) (json.RawMessage, error) {
	if r.enc == nil {
		r.enc = json.NewEncoder(&r.docs) // escapes HTML, as json.Marshal
	}
	start := r.docs.Len()
	if err := r.enc.Encode(v); err != nil {
		r.docs.Truncate(start)
		return nil, err
	}
	// Encode ends the document with a newline; the slice is capped so
	// that appending to it cannot reach the next document.
	end := r.docs.Len() - 1
	return r.docs.Bytes()[start:end:end], nil
}

// call returns c's document (attribution.ToolCall.AppendJSON: what doc
// would make of it, without reflection) in the round's room: valid until
// the next round. A round writes one per call that changed.
func (r *roundBufs) call(c *attribution.ToolCall) (json.RawMessage, error) {
	start := r.docs.Len()
	b, err := c.AppendJSON(r.docs.AvailableBuffer())
	if err != nil {
		return nil, err
	}
	r.docs.Write(b)
	end := r.docs.Len()
	return r.docs.Bytes()[start:end:end], nil
}

// reuse takes back the room of a round's batch once PutModel has returned,
// its rows and documents released.
func (r *roundBufs) reuse(b *store.ModelBatch) {
	r.batch = store.ModelBatch{
		Reset:     reuse(b.Reset),
		Sessions:  reuse(b.Sessions),
		Agents:    reuse(b.Agents),
		ToolCalls: reuse(b.ToolCalls),
	}
	r.envs, r.payloads = reuse(r.envs), reuse(r.payloads)
	if r.docs.Cap() > maxKeptDocs {
		r.docs = bytes.Buffer{}
	}
	r.docs.Reset()
}
