package collector

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// handleEvents is POST /v1/events.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if code, msg := checkJSONContentType(r); code != 0 {
		writeError(w, code, msg)
		return
	}
	body := s.openBody(w, r)
	if body == nil {
		return
	}
	defer body.Close()
	// Read in a buffer sized by Content-Length: DecodeBatch's envelopes
	// keep slices of it.
	data, _ := body.readAll(r.ContentLength)
	if s.readFailed(w, body) {
		return
	}
	sp := newSplitPayloads()
	defer sp.release()
	envs, err := decodeBatchSplit(data, sp)
	if err != nil {
		s.metrics.rejected.Inc()
		s.rejectBatch(w, err)
		return
	}
	s.metrics.requestBatch.Update(float64(len(envs)))
	res, err := s.ingest(r.Context(), envs, sp)
	var be *BatchError
	switch {
	case errors.As(err, &be):
		s.metrics.rejected.Inc()
		s.rejectBatch(w, err)
	case err == nil:
		writeJSON(w, http.StatusOK, res)
	case errors.Is(err, ErrForbidden):
		writeError(w, http.StatusForbidden, "the batch writes into another user's session")
	case errors.Is(err, ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "the collector is shutting down; retry later")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The client went away; nobody reads this.
		writeError(w, http.StatusServiceUnavailable, "request canceled before the commit was confirmed")
	case errors.As(err, new(*commitError)):
		// The writer logs it, once per outage.
		writeDatabaseDown(w, "cannot store the batch")
	default:
		writeError(w, http.StatusInternalServerError, "cannot store the batch: "+err.Error())
	}
}

func (s *Server) rejectBatch(w http.ResponseWriter, err error) {
	var be *BatchError
	if errors.As(err, &be) {
		idx := be.Index
		writeJSON(w, http.StatusBadRequest, errorBody{Error: be.Error(), Index: &idx})
		return
	}
	writeError(w, http.StatusBadRequest, err.Error())
}

// checkJSONContentType requires a JSON body. Besides saying what the
// endpoint takes, it keeps web pages out: a browser sends a cross-origin
// application/json POST only after a CORS preflight, which this server never
// approves, so a page the user visits cannot forge events into a local,
// token-less collector with a "simple" text/plain request.
func checkJSONContentType(r *http.Request) (int, string) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type must be application/json, got %q", ct)
	}
	return 0, ""
}
