package collector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store"
)

// maxSignalCalls bounds the calls GET /v1/sessions/{id}/signals reads.
const maxSignalCalls = 50000

// SignalsResponse is the body of GET /v1/sessions/{id}/signals: per agent
// that made calls, its signals (attribution.Signals) and its run of
// failures. Truncated is set when the session has more calls than were
// read (the first 50,000).
type SignalsResponse struct {
	Agents     []attribution.AgentSignals `json:"agents"`
	Thresholds attribution.Thresholds     `json:"thresholds"`
	Truncated  bool                       `json:"truncated"`
	DerivedSeq int64                      `json:"derived_seq"`
}

// handleSignals is GET /v1/sessions/{id}/signals?failed_repeats=&read_repeats=:
// the signs that an agent of the session is going wrong, read by
// attribution from the session's calls as the model stored them.
func (s *Server) handleSignals(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	th := attribution.DefaultThresholds
	for _, p := range []struct {
		name string
		into *int
	}{{"failed_repeats", &th.FailedRepeats}, {"read_repeats", &th.ReadRepeats}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1000 {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("%s must be a count from 1 to 1000, got %q", p.name, v))
				return
			}
			*p.into = n
		}
	}
	res, err := s.resolve(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	f := store.ToolCallFilter{SessionID: res.data.SessionID, Limit: store.MaxLimit}
	if f.SessionID == "" {
		f.SessionID = res.sess.ID
	}
	if res.agent != nil {
		f.AgentIDs = []string{res.agent.AgentID}
	}
	body := SignalsResponse{Thresholds: th, DerivedSeq: res.own.Seq}
	var calls []*attribution.ToolCall
	for {
		page, err := s.store.ToolCalls(r.Context(), f)
		if err != nil {
			s.storeError(w, r, err)
			return
		}
		for _, row := range page.ToolCalls {
			c := new(attribution.ToolCall)
			if json.Unmarshal(row.Doc, c) == nil {
				calls = append(calls, c)
			}
		}
		if page.Next == "" {
			break
		}
		if len(calls) >= maxSignalCalls {
			body.Truncated = true
			break
		}
		f.Cursor = page.Next
	}
	body.Agents = attribution.Signals(calls, th)
	writeJSON(w, http.StatusOK, body)
}
