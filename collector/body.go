package collector

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// A request body costs the collector about its size in memory while it is
// decoded and stored, and every request is a goroutine: without a bound
// across requests, N clients sending bodies just under MaxBodyBytes hold N
// times that at once. Two bounds keep memory flat under abuse:
//
//   - a body that declares (Content-Length) more than MaxBodyBytes is
//     refused with 413 before a byte of it is read;
//   - the bytes of all bodies being read or held at once are capped
//     (MaxInflightBytes): a request that would pass the cap is answered 503
//     with Retry-After, which the hook treats as "spool and retry later".
//
// A body is read whole and its envelopes decoded in place (DecodeBatch):
// their payloads are slices of the body, so a batch is held once.

// bodyBudgetStep is how many bytes a body of unknown length (chunked, or
// gzip once inflated) reserves at a time as it is read.
const bodyBudgetStep = 1 << 20

// retryAfterSeconds is the Retry-After of a 503 for lack of body budget:
// commits take milliseconds, so the bytes held now are soon released.
const retryAfterSeconds = 1

// errBusy is the error of a body read that would pass MaxInflightBytes.
var errBusy = errors.New("the collector holds as many request bytes as it may; retry later")

// errTooLarge is the error of a body larger than MaxBodyBytes once decoded.
var errTooLarge = errors.New("body too large")

// inflight counts the request-body bytes held across requests, up to max.
// Reservations never wait: a request that cannot reserve is refused at
// once, so an abusive client costs a 503, not a queue of goroutines each
// holding a connection and a buffer.
type inflight struct {
	mu   sync.Mutex
	used int64
	max  int64
}

// reserve takes n bytes of the budget and reports whether it could.
func (f *inflight) reserve(n int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n > f.max-f.used {
		return false
	}
	f.used += n
	return true
}

func (f *inflight) release(n int64) {
	f.mu.Lock()
	f.used -= n
	f.mu.Unlock()
}

// body is a request body being read: decoded (gzip), bounded by limit and
// accounted in the server's inflight budget. Close releases what it
// reserved: call it once what was decoded from the body is no longer held.
type body struct {
	r      io.Reader
	closer io.Closer // the gzip reader, if any
	budget *inflight
	limit  int64
	held   int64 // bytes reserved in budget
	read   int64 // decoded bytes read so far
	err    error // the first read error other than io.EOF
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	// Never read more than the budget can take in one step.
	if len(p) > bodyBudgetStep {
		p = p[:bodyBudgetStep]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	switch {
	case b.read > b.limit:
		b.err = errTooLarge
	case b.read > b.held:
		step := min(max(b.read-b.held, bodyBudgetStep), b.limit-b.held)
		if !b.budget.reserve(step) {
			b.err = errBusy
		} else {
			b.held += step
		}
	}
	if b.err == nil && err != nil && err != io.EOF {
		b.err = err
	}
	if b.err != nil {
		return n, b.err
	}
	return n, err
}

// Close releases the body's reservation.
func (b *body) Close() error {
	if b.closer != nil {
		b.closer.Close()
	}
	b.budget.release(b.held)
	b.held = 0
	return nil
}

// openBody starts reading r's body, gunzipping it when the client says so.
// A body that declares more than s.cfg.MaxBodyBytes, or more than the
// in-flight budget has left, is refused here without being read (the
// error was answered, with its status, and openBody returns nil).
func (s *Server) openBody(w http.ResponseWriter, r *http.Request) *body {
	limit := s.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body of %d bytes is larger than the %d the collector accepts", r.ContentLength, limit))
		return nil
	}
	b := &body{budget: s.inflight, limit: limit}
	if r.ContentLength > 0 {
		if !s.inflight.reserve(r.ContentLength) {
			s.busy(w)
			return nil
		}
		b.held = r.ContentLength
	}
	var src io.Reader = http.MaxBytesReader(w, r.Body, limit)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			b.Close()
			if tooLarge(err) {
				writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", limit))
			} else {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid gzip body: %v", err))
			}
			return nil
		}
		// A small compressed body can inflate enormously: the limit and
		// the budget count what it decodes to, not only what was sent.
		src, b.closer = zr, zr
	default:
		b.Close()
		writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported Content-Encoding %q: send identity or gzip", enc))
		return nil
	}
	b.r = src
	return b
}

// readAll reads the whole body, in a buffer sized by Content-Length when
// the client sent one (no doubling growth past what is needed).
func (b *body) readAll(contentLength int64) ([]byte, error) {
	buf := make([]byte, 0, max(min(contentLength, b.limit)+1, 512))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := b.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readFailed answers a request whose body could not be read, when err came
// from reading it, and reports whether it did.
func (s *Server) readFailed(w http.ResponseWriter, b *body) bool {
	switch err := b.err; {
	case err == nil:
		return false
	case errors.Is(err, errBusy):
		s.busy(w)
	case errors.Is(err, errTooLarge), tooLarge(err):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", b.limit))
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.Is(err, io.ErrUnexpectedEOF):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid or truncated body: %v", err))
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("cannot read body: %v", err))
	}
	return true
}

// busy answers 503 for lack of in-flight body budget.
func (s *Server) busy(w http.ResponseWriter) {
	s.metrics.bodiesRefused.Inc()
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	// The rest of the body is not read: close the connection rather than
	// make net/http drain it.
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusServiceUnavailable, errBusy.Error())
}

func tooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
