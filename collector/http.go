package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/hookwatch/hookwatch/spool"
)

// errorBody is the JSON body of every error response.
type errorBody struct {
	Error string `json:"error"`
	// Index is the envelope at fault in a rejected batch.
	Index *int `json:"index,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		code = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(encodeFailed)
	}
	writeBody(w, code, buf.Bytes())
}

// encodeFailed is the body of a 500 for an answer encoding/json refused.
const encodeFailed = `{"error":"cannot encode the response"}` + "\n"

// writeBody answers with body, a JSON document (an answer written by hand,
// as writeJSON would write it), and writeJSON's headers.
func writeBody(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(body)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorBody{Error: msg})
}

// outageRetryAfterSeconds is the Retry-After of a 503 for a database that
// does not answer: an outage lasts seconds to minutes, and the clients keep
// what they sent meanwhile, so asking them back sooner only adds load.
const outageRetryAfterSeconds = 5

// writeDatabaseDown answers 503 with Retry-After for a request the database
// failed, saying what could not be done (msg). Every client of the
// collector keeps what a 503 did not take and sends it again (the hook and
// its spool, hookwatch forward, the Go SDK's forwarder: hook.Refused is not
// 503), and so do HTTP clients at large. The database's own error is the
// server's log's, not the client's: it names the database's host and user.
func writeDatabaseDown(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(outageRetryAfterSeconds))
	writeError(w, http.StatusServiceUnavailable, msg+": the database does not answer; retry later")
}

// healthBody is the reply of GET /healthz.
type healthBody struct {
	Status  string `json:"status"` // "ok" or "degraded"
	Version string `json:"version"`
	DB      string `json:"db"` // "ok" or the error
	// Spool is the local spool's state, when the collector drains one.
	Spool *spoolHealth `json:"spool,omitempty"`
}

// spoolHealth is what /healthz says about the local spool.
type spoolHealth struct {
	spool.Stats
	// Unacknowledged counts the events lost (dropped or corrupt) that the
	// user has not acknowledged (hookwatch doctor --ack-losses); while it
	// is not 0 the status is degraded.
	Unacknowledged int64 `json:"unacknowledged"`
	// Error is why the spool could not be read, if it could not.
	Error string `json:"error,omitempty"`
}

// handleHealth is GET /healthz: 503 when the database does not answer;
// 200 otherwise, with status "degraded" while events were lost that the
// user has not acknowledged — the collector works, but the record has gaps.
// It needs no token, since probes carry none; but a caller without a valid
// one, on a collector that requires them, learns only the status: the
// database's error text and the spool's figures describe the server's
// inside.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if _, code, _ := s.principal(r); code != 0 {
		s.handleHealthAnonymous(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	body := healthBody{Status: "ok", Version: s.cfg.Version, DB: "ok"}
	if sp := s.metrics.spool.Load(); sp != nil {
		st, err := sp.Stats()
		body.Spool = &spoolHealth{Stats: st, Unacknowledged: st.Unacknowledged()}
		if err != nil {
			body.Spool.Error = err.Error()
		}
		if body.Spool.Unacknowledged > 0 {
			body.Status = "degraded"
		}
	}
	if _, err := s.store.LastSeq(ctx); err != nil {
		body.Status, body.DB = "degraded", err.Error()
		writeJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// handleHealthAnonymous is GET /healthz for a caller without a valid token:
// the status and version alone, and the same status codes.
func (s *Server) handleHealthAnonymous(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	body := struct {
		Status  string `json:"status"`
		Version string `json:"version"`
	}{Status: "ok", Version: s.cfg.Version}
	if sp := s.metrics.spool.Load(); sp != nil {
		if st, _ := sp.Stats(); st.Unacknowledged() > 0 {
			body.Status = "degraded"
		}
	}
	if _, err := s.store.LastSeq(ctx); err != nil {
		body.Status = "degraded"
		writeJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	writeJSON(w, http.StatusOK, body)
}
