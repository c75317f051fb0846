package collector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/stale"
)

// Bounds of GET /v1/sessions/{id}/files.
const (
	// maxRecordedFiles is how many files it lists at most: the most
	// recently touched. The hook checks each on disk within its budget.
	maxRecordedFiles = 1000
	// maxLineage is how many sessions it follows up a lineage.
	maxLineage = 32
	// maxFilesCalls bounds the calls read over the whole lineage.
	maxFilesCalls = 50000
)

// FilesResponse is the body of GET /v1/sessions/{id}/files: the files the
// session and the sessions it continues read or wrote, with the state the
// hook recorded the last time they did (attribution.RecordedFiles), most
// recently touched first. Truncated is set when calls or files were left
// out by the bounds.
type FilesResponse struct {
	Files      []stale.Recorded `json:"files"`
	Truncated  bool             `json:"truncated"`
	DerivedSeq int64            `json:"derived_seq"`
}

// handleFiles is GET /v1/sessions/{id}/files, what the hook's
// stale-context guard asks at SessionStart(resume|compact) before checking
// the files on its machine. The lineage is the model's: the session (a
// throwaway id stands for the session it was folded into), then its parent
// (ParentSessionID: a fork's, a clear's, a compaction's) and so on up,
// each ancestor's calls counted up to where its child began. It reads the
// model as stored, without waiting (resolveStored): the guard asks at a
// SessionStart its hook has just delivered, which the model holds back for
// ordering (~40 ms measured), while the calls it needs were applied long
// before. A virtual subagent session is not found.
func (s *Server) handleFiles(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	res, err := s.resolveStored(ctx, r.PathValue("id"))
	if err == nil && res.agent != nil {
		// The files are the session's, whichever agent read them.
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s is a subagent: its files are its session's, /v1/sessions/%s/files", r.PathValue("id"), res.sess.ID))
		return
	}
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	m := res.data
	body := FilesResponse{DerivedSeq: m.Seq}
	sess := decodeSummary(m.Summary)
	if sess == nil {
		body.Files = []stale.Recorded{}
		writeJSON(w, http.StatusOK, body)
		return
	}
	calls, truncated, err := s.lineageCalls(ctx, sess)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	body.Files = attribution.RecordedFiles(calls, maxRecordedFiles+1)
	if len(body.Files) > maxRecordedFiles {
		body.Files, truncated = body.Files[:maxRecordedFiles], true
	}
	body.Truncated = truncated
	writeJSON(w, http.StatusOK, body)
}

// lineageCalls reads the calls of sess and of the sessions it continues,
// root first, each session's by start; an ancestor's only those that began
// before its child did.
func (s *Server) lineageCalls(ctx context.Context, sess *attribution.Session) (calls []*attribution.ToolCall, truncated bool, err error) {
	type part struct {
		id     string
		before time.Time // zero: every call
	}
	chain := []part{{id: sess.SessionID}}
	seen := map[string]bool{sess.SessionID: true}
	for cur := sess; cur.ParentSessionID != "" && !seen[cur.ParentSessionID]; {
		if len(chain) == maxLineage {
			truncated = true
			break
		}
		ms, err := s.store.SessionModels(ctx, []string{cur.ParentSessionID})
		if err != nil {
			return nil, false, err
		}
		parent := decodeSummary(ms[cur.ParentSessionID].Summary)
		if parent == nil {
			break
		}
		seen[parent.SessionID] = true
		chain = append(chain, part{id: parent.SessionID, before: cur.StartedAt})
		cur = parent
	}
	for i := len(chain) - 1; i >= 0; i-- {
		p := chain[i]
		err := s.modeler.stored.eachCall(ctx, p.id, func(c *attribution.ToolCall) error {
			if len(calls) >= maxFilesCalls {
				truncated = true
				return errEnough
			}
			if p.before.IsZero() || c.StartedAt.Before(p.before) {
				calls = append(calls, c)
			}
			return nil
		})
		if errors.Is(err, errEnough) {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	return calls, truncated, nil
}
