package collector

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/store"
)

// CompareResponse is the body of GET /v1/sessions/{id}/compare/{other}:
// the two sessions side by side (attribution.Comparison; id is A, other
// B), and the last_seq each side's model was computed at.
type CompareResponse struct {
	*attribution.Comparison
	DerivedSeqA int64 `json:"derived_seq_a"`
	DerivedSeqB int64 `json:"derived_seq_b"`
}

// handleCompare is GET /v1/sessions/{id}/compare/{other}?unrelated=1: two
// sessions side by side, read from their models (summaries, agents and
// calls as stored) by attribution.Compare, with the baseline they share
// through fork lineage (attribution.FindBaseline). Two sessions that share
// none are refused (409) unless unrelated=1 asks to compare them anyway;
// the answer's baseline is then null. A throwaway id compares the session
// it was folded into; virtual subagent sessions are refused (400).
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	unrelated := r.URL.Query().Get("unrelated")
	if unrelated != "" && unrelated != "0" && unrelated != "1" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unrelated must be 0 or 1, got %q", unrelated))
		return
	}
	var sides [2]*attribution.Session
	var seqs [2]int64
	for i, id := range []string{r.PathValue("id"), r.PathValue("other")} {
		res, err := s.resolve(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, fmt.Sprintf("session %s not found", id))
			return
		}
		if err != nil {
			s.storeError(w, r, err)
			return
		}
		if res.agent != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("%s is a subagent: compare sessions", id))
			return
		}
		sides[i] = decodeSummary(res.data.Summary)
		if sides[i] == nil {
			sides[i] = &attribution.Session{SessionID: res.sess.ID, Status: attribution.SessionRunning}
		}
		seqs[i] = res.own.Seq
	}
	a, b := sides[0], sides[1]
	if a.SessionID == b.SessionID {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s and %s are the same session: compare two", r.PathValue("id"), r.PathValue("other")))
		return
	}
	base, err := attribution.FindBaseline(a, b, func(id string) (*attribution.Session, error) {
		ms, err := s.store.SessionModels(ctx, []string{id})
		if err != nil {
			return nil, err
		}
		return decodeSummary(ms[id].Summary), nil
	})
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if base == nil && unrelated != "1" {
		writeError(w, http.StatusConflict, fmt.Sprintf("sessions %s and %s share no baseline: neither was forked from the other or from a session they both continue (pass unrelated=1 to compare them anyway)", a.SessionID, b.SessionID))
		return
	}
	sa, err := s.compareSide(ctx, a)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	sb, err := s.compareSide(ctx, b)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, CompareResponse{Comparison: attribution.Compare(sa, sb, base), DerivedSeqA: seqs[0], DerivedSeqB: seqs[1]})
}

// compareSide reads a session's agents and calls, as stored, into its side
// of a comparison, one page at a time.
func (s *Server) compareSide(ctx context.Context, sess *attribution.Session) (*attribution.Side, error) {
	side := attribution.NewSide(sess)
	err := s.modeler.stored.eachAgent(ctx, sess.SessionID, func(a *attribution.Agent) error {
		side.Agent(a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.modeler.stored.eachCall(ctx, sess.SessionID, func(c *attribution.ToolCall) error {
		side.Call(c)
		return nil
	})
	return side, err
}
