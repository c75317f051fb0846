package postgres

import "encoding/binary"

// An insert's columns go to PostgreSQL as one-dimensional arrays in the
// binary wire format, encoded here into one buffer the DB keeps between
// inserts (insertArgs): pgx's encoder would box every element of every
// column through reflection and grow a fresh buffer for each insert, a
// copy of the envelopes that a batch of thousands pays in page faults.

// The element types' OIDs (pg_type).
const (
	byteaOID = 17
	int8OID  = 20
)

// arrayWriter appends one array to a buffer: begin, an element at a time,
// end.
type arrayWriter struct {
	buf   []byte
	start int // where the array's header starts in buf
	n     int32
	nulls bool
}

// begin starts an array of elements of type oid.
func (w *arrayWriter) begin(oid uint32) {
	w.start, w.n, w.nulls = len(w.buf), 0, false
	// ndim, has-nulls flag, element type, then the one dimension's length
	// and lower bound: filled in by end.
	w.buf = binary.BigEndian.AppendUint32(w.buf, 1)
	w.buf = binary.BigEndian.AppendUint32(w.buf, 0)
	w.buf = binary.BigEndian.AppendUint32(w.buf, oid)
	w.buf = binary.BigEndian.AppendUint32(w.buf, 0)
	w.buf = binary.BigEndian.AppendUint32(w.buf, 1)
}

// bytes appends a bytea element.
func (w *arrayWriter) bytes(b []byte) {
	w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(len(b)))
	w.buf = append(w.buf, b...)
	w.n++
}

// str appends a bytea element holding s.
func (w *arrayWriter) str(s string) {
	w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(len(s)))
	w.buf = append(w.buf, s...)
	w.n++
}

// null appends a NULL element.
func (w *arrayWriter) null() {
	w.buf = binary.BigEndian.AppendUint32(w.buf, 0xffffffff) // length -1
	w.n, w.nulls = w.n+1, true
}

// int8 appends a bigint element.
func (w *arrayWriter) int8(v int64) {
	w.buf = binary.BigEndian.AppendUint32(w.buf, 8)
	w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(v))
	w.n++
}

// end completes the array begun last and returns where it stands in buf.
func (w *arrayWriter) end() [2]int {
	if w.nulls {
		binary.BigEndian.PutUint32(w.buf[w.start+4:], 1)
	}
	binary.BigEndian.PutUint32(w.buf[w.start+12:], uint32(w.n))
	return [2]int{w.start, len(w.buf)}
}
