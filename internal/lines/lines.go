// Package lines reads newline-delimited input of any size, hostile
// included (transcripts, rollouts, the spool, audit files), one line at a
// time within a bound on what it holds.
//
// A Reader returns each line without its '\n', as a slice of its buffer
// (valid until the next call), or of a buffer of its own for a line longer
// than that. Besides the line it reports a Flag:
//
//   - Long: the line is longer than the Reader's max. Its bytes are passed
//     over as they are read, never held, and not returned (line is nil).
//     A line of exactly max bytes is not Long.
//   - Unterminated: the input ended before the line's '\n' (a line still
//     being written, or a file that does not end with one). It is the last
//     line Next returns; the next call returns io.EOF. Its bytes are
//     returned unless it is also Long. An input that ends with '\n' has no
//     Unterminated line.
//
// What a caller does with either is its policy: skip and count a Long line
// or take it as corruption, take an Unterminated line as the last one or
// leave it for a later read.
//
// Offsets count bytes from the start of the input the Reader was given:
// Offset is just past the '\n' of the last line Next returned (Long ones
// included), where a later read starts to see the next line whole; the line
// Next returned began at the Offset before the call. Consumed also counts
// the bytes of an Unterminated line, for a caller that resumes past them
// (with ResumeLong, past the part of a Long line it has read).
//
// Only the standard library is imported: the hook links this package.
package lines

import (
	"bufio"
	"io"
	"math"
)

// Unbounded is the max of a Reader that holds a line of any length, for
// input that is the program's own or the user's rather than hostile.
const Unbounded = math.MaxInt

// Flag says what the line Next returned is; flags combine, and the zero
// Flag is a whole line of at most max bytes.
type Flag uint8

const (
	// Long: the line is longer than max; it was passed over.
	Long Flag = 1 << iota
	// Unterminated: the input ended before the line's '\n'.
	Unterminated
)

// Reader reads lines of at most max bytes. It is not safe for concurrent
// use.
type Reader struct {
	// br is held by value, and NewReader kept small enough to be inlined:
	// a Reader that does not escape then costs one allocation, its
	// buffer, as a bufio.Reader does (the spool drains a segment per
	// event).
	br       bufio.Reader
	max      int
	long     []byte // a line longer than br's buffer, gathered so far
	skip     bool   // within a Long line: pass over up to its '\n'
	eof      bool   // an Unterminated line was returned
	err      error  // the input's error, returned again by every later Next
	off, pos int64  // Offset, Consumed
}

// NewReader returns a Reader of src with a buffer of size bytes that
// returns lines of at most max bytes (Unbounded: any). A line longer than
// the buffer is gathered in memory while it is not longer than max: a
// Reader holds at most its buffer and max bytes more.
func NewReader(src io.Reader, size, max int) *Reader {
	if b, ok := src.(*bufio.Reader); ok {
		// Hidden from bufio.NewReaderSize, which returns a large enough
		// *bufio.Reader itself: r.br, a copy, would share its buffer.
		src = struct{ io.Reader }{b}
	}
	return &Reader{br: *bufio.NewReaderSize(src, size), max: max}
}

// Reset makes r read src from its start, as a new Reader with the same
// buffer and max: offsets start again from 0.
func (r *Reader) Reset(src io.Reader) {
	r.br.Reset(src)
	r.long, r.skip, r.eof, r.err, r.off, r.pos = nil, false, false, nil, 0, 0
}

// ResumeLong tells r that its input starts inside a Long line, at the
// Consumed of a Reader that returned it Unterminated: what comes before the
// first '\n' is that line's rest, and Next returns it as Long. Call it
// before the first Next.
func (r *Reader) ResumeLong() { r.skip = true }

// Offset returns the offset just past the '\n' of the last line Next
// returned: the start of the next one.
func (r *Reader) Offset() int64 { return r.off }

// Consumed returns how many bytes of the input Next has read: Offset, plus
// the bytes of an Unterminated line.
func (r *Reader) Consumed() int64 { return r.pos }

// TrimCR returns line, which Next returned with f, without the '\r' of a
// "\r\n" line end, which ends a line as a '\n' does (as
// bufio.Reader.ReadLine reads it); an Unterminated line keeps its '\r',
// which no '\n' followed.
func TrimCR(line []byte, f Flag) []byte {
	if f&Unterminated == 0 && len(line) > 0 && line[len(line)-1] == '\r' {
		return line[:len(line)-1]
	}
	return line
}

// Next returns the next line, without its '\n', and its flags. line is nil
// for a Long line and is valid until the next call. At the end of the input
// Next returns io.EOF, also when the input ends right after a '\n' or (after
// ResumeLong) holds nothing. On an error of the input it returns that
// error, then and on every later call: the bytes of the line it was reading
// are lost, and Offset is where that line starts.
func (r *Reader) Next() (line []byte, f Flag, err error) {
	if r.err != nil {
		return nil, 0, r.err
	}
	if r.eof {
		return nil, 0, io.EOF
	}
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.pos += int64(len(chunk))
		switch {
		case err == bufio.ErrBufferFull:
			if !r.skip && len(r.long)+len(chunk) > r.max {
				r.skip, r.long = true, nil
			}
			if !r.skip {
				r.long = append(r.long, chunk...)
			}
			continue
		case err == io.EOF:
			if r.pos == r.off {
				return nil, 0, io.EOF // nothing since the last '\n'
			}
			r.eof = true
			if r.skip || len(r.long)+len(chunk) > r.max {
				r.skip, r.long = false, nil
				return nil, Long | Unterminated, nil
			}
			line = chunk
			if len(r.long) > 0 {
				line, r.long = append(r.long, chunk...), r.long[:0]
			}
			return line, Unterminated, nil
		case err != nil:
			r.err, r.pos, r.long = err, r.off, nil
			return nil, 0, err
		}
		r.off = r.pos
		line = chunk[:len(chunk)-1]
		if len(r.long) > 0 {
			line = append(r.long, line...)
			r.long = r.long[:0]
		}
		if r.skip || len(line) > r.max {
			r.skip = false
			return nil, Long, nil
		}
		return line, 0, nil
	}
}
