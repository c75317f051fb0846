package collector

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
)

// batchBody is the body of POST /v1/events.
type batchBody struct {
	Envelopes []event.Envelope `json:"envelopes"`
}

// DecodeBatch parses the body of POST /v1/events, {"envelopes":[…]}, where
// each element is an event.Envelope. Unknown top-level keys are ignored. An
// element that is not an envelope fails with a *BatchError naming it; any
// other error describes what is wrong with the body. It only parses:
// envelopes are validated by Ingest.
func DecodeBatch(body []byte) ([]event.Envelope, error) {
	var b batchBody
	err := json.Unmarshal(body, &b)
	if err == nil && b.Envelopes != nil {
		return b.Envelopes, nil
	}
	// The fast path failed: find out why, with a message a person can act on.
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, errors.New(`empty body: want {"envelopes":[…]}`)
	}
	if !json.Valid(body) {
		var top any
		serr := json.Unmarshal(body, &top)
		var se *json.SyntaxError
		if errors.As(serr, &se) {
			return nil, fmt.Errorf("malformed JSON at byte %d: %v", se.Offset, se)
		}
		return nil, fmt.Errorf("malformed JSON: %v", serr)
	}
	if body[0] != '{' {
		return nil, errors.New(`body is not a JSON object: want {"envelopes":[…]}`)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	raw, ok := top["envelopes"]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, errors.New(`missing "envelopes": want {"envelopes":[…]}`)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, errors.New(`"envelopes" is not an array`)
	}
	envs := make([]event.Envelope, len(elems))
	for i, el := range elems {
		if t := bytes.TrimSpace(el); len(t) == 0 || t[0] != '{' {
			return nil, &BatchError{Index: i, Err: errors.New("not a JSON object")}
		}
		if err := json.Unmarshal(el, &envs[i]); err != nil {
			return nil, &BatchError{Index: i, Err: describeJSONError(err)}
		}
	}
	// Every element decoded alone: the fast path's error lies elsewhere
	// (it should not happen); report it as it is.
	if err != nil {
		return nil, fmt.Errorf("malformed batch: %v", describeJSONError(err))
	}
	return envs, nil
}

// describeJSONError rewrites encoding/json's type errors in terms of the
// envelope's fields.
func describeJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s: want a %s, got a JSON %s", te.Field, te.Type, te.Value)
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("received_at: not an RFC 3339 time: %q", pe.Value)
	}
	return err
}

// handleEvents is POST /v1/events.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if code, msg := checkJSONContentType(r); code != 0 {
		writeError(w, code, msg)
		return
	}
	body, code, err := readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		writeError(w, code, err.Error())
		return
	}
	envs, err := DecodeBatch(body)
	if err != nil {
		s.metrics.rejected.Inc()
		s.rejectBatch(w, err)
		return
	}
	s.metrics.requestBatch.Update(float64(len(envs)))
	evs, err := toEvents(envs, time.Now())
	if err != nil {
		s.metrics.rejected.Inc()
		s.rejectBatch(w, err)
		return
	}
	res, err := s.writer.submit(r.Context(), evs)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, res)
	case errors.Is(err, ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "the collector is shutting down; retry later")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The client went away; nobody reads this.
		writeError(w, http.StatusServiceUnavailable, "request canceled before the commit was confirmed")
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

// readBody reads the request body, gunzipping it when the client says so,
// and enforces limit on the decoded size. It returns the status code to
// answer with on error.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, int, error) {
	var src io.Reader = http.MaxBytesReader(w, r.Body, limit)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			if tooLarge(err) {
				return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body larger than %d bytes", limit)
			}
			return nil, http.StatusBadRequest, fmt.Errorf("invalid gzip body: %v", err)
		}
		defer zr.Close()
		// A small compressed body can inflate enormously: cap what it
		// decodes to, not only what was sent.
		src = io.LimitReader(zr, limit+1)
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("unsupported Content-Encoding %q: send identity or gzip", enc)
	}
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= limit {
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(src); err != nil {
		if tooLarge(err) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body larger than %d bytes", limit)
		}
		if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, http.StatusBadRequest, fmt.Errorf("invalid or truncated body: %v", err)
		}
		return nil, http.StatusBadRequest, fmt.Errorf("cannot read body: %v", err)
	}
	if int64(buf.Len()) > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body larger than %d bytes once decompressed", limit)
	}
	return buf.Bytes(), 0, nil
}

func tooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
