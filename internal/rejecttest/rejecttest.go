// Package rejecttest sets up, for the tests of every sender of spooled
// envelopes (the hook's drain, forward, toolhook), a batch a real collector
// refuses one envelope of, and a collector whose connection drops once
// while the batch is sent one envelope at a time: the batch stays spooled
// and is delivered again, and the refused envelope must be set aside once.
package rejecttest

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/store/storetest"
)

// Refused is the index, in Records, of the envelope a collector refuses.
const Refused = 7

// dropAt is the index, in Records, of the envelope whose request the
// collector of Collector drops: one after Refused.
const dropAt = 12

// Records returns 20 envelopes of the corpus, encoded as the spool holds
// them; a collector takes them all but Records()[Refused], whose id is
// none.
func Records(tb testing.TB) [][]byte {
	var recs [][]byte
	for i, p := range storetest.Corpus(tb)[:20] {
		env := storetest.Envelope(p.Runtime, storetest.At(i), p.JSON)
		if i == Refused {
			env.ID = "not an id!"
		}
		recs = append(recs, env.AppendJSON(nil))
	}
	return recs
}

// Collector starts a collector (in process, on SQLite) and returns its
// URL, its store, and whether it dropped a connection yet: it drops the
// first request that carries recs[dropAt] without recs[0] — sent alone,
// after the batch of recs was refused whole — as a collector that goes
// down does, and answers every other one.
func Collector(tb testing.TB, recs [][]byte) (url string, db store.Store, dropped func() bool) {
	tb.Helper()
	db = sqlite.MustOpenDB(tb)
	srv, err := collector.New(collector.Config{Store: db, Version: "test"})
	if err != nil {
		tb.Fatal(err)
	}
	var drop atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, recs[dropAt]) && !bytes.Contains(body, recs[0]) && drop.CompareAndSwap(false, true) {
			panic(http.ErrAbortHandler) // the connection is reset
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		srv.Handler().ServeHTTP(w, r)
	}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the dropped connection
	tb.Cleanup(func() { ts.Close(); srv.Shutdown(context.Background()) })
	return ts.URL, db, drop.Load
}
