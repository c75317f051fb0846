package collector

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/store"
)

// QueuedForTest returns the number of batches waiting for the writer.
func (s *Server) QueuedForTest() int { return len(s.writer.queue) }

// SetPruneEveryForTest sets the interval of the retention passes.
func SetPruneEveryForTest(d time.Duration) { pruneEvery = d }

// SetAuditPruneEveryForTest sets the interval of the audit trail's prune
// passes, and returns a function that restores it.
func SetAuditPruneEveryForTest(d time.Duration) func() {
	old := auditPruneEvery
	auditPruneEvery = d
	return func() { auditPruneEvery = old }
}

// SetModelMaxBacklogForTest sets the bound of the events committed and not
// applied yet that the model holds in memory, and returns a function that
// restores it.
func SetModelMaxBacklogForTest(n int) func() {
	old := modelMaxBacklog
	modelMaxBacklog = n
	return func() { modelMaxBacklog = old }
}

// SetModelFlushWaitForTest sets how long the model's last rounds at stop
// may take, and returns a function that restores it.
func SetModelFlushWaitForTest(d time.Duration) func() {
	old := modelFlushWait
	modelFlushWait = d
	return func() { modelFlushWait = old }
}

// SetBeforeSocketForTest sets what Start calls once attached to the spool,
// before the hook socket listens, and returns a function that restores it.
func SetBeforeSocketForTest(f func()) func() {
	old := beforeSocket
	beforeSocket = f
	return func() { beforeSocket = old }
}

// CopyLookback is copyLookback: how many events before a stream's first
// copy it looks for the hook's events that copy copies.
const CopyLookback = copyLookback

// FollowForTest runs a follower (FollowRollouts or FollowTranscripts,
// which run calls with ctx, or a follower's run) in the background until
// the test ends, then cancels ctx and waits for it to return, before the
// cleanups registered earlier (its server's) run.
func FollowForTest(t testing.TB, run func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// LeadingForTest reports whether the server holds the model lease of its
// shared store.
func (s *Server) LeadingForTest() bool { return s.modeler.isLeading() }

// SessionsPageByReflection is the page of GET /v1/sessions that f selects
// as writeJSON writes SessionsResponse of the views view makes: what
// appendSessionsPage must write byte for byte. byHand counts the sessions
// of the page appendListed writes itself (the others are left to
// encoding/json).
func (s *Server) SessionsPageByReflection(ctx context.Context, f store.SessionFilter) (body []byte, byHand int, err error) {
	page, err := s.store.Sessions(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	rows, err := s.listedModels(ctx, page.Sessions)
	if err != nil {
		return nil, 0, err
	}
	views := make([]SessionView, len(rows))
	for i, r := range rows {
		views[i] = view(r.sess, r.own, r.target)
		if _, ok := appendListed(nil, r); ok {
			byHand++
		}
	}
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, SessionsResponse{Sessions: views, NextCursor: page.Next})
	return rec.Body.Bytes(), byHand, nil
}
