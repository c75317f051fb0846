// Package modeled stores envelopes the way hookwatch does — through a real
// collector, in process — and returns once their session model is stored,
// for the tests and benchmarks that read the model's rows (the exports).
package modeled

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// Store posts envs, 1,000 at a time, to a collector on the SQLite database
// at path (created when missing), waits until the model of every session
// is current (at most timeout), and stops the collector, which closes the
// database: open it again to read.
func Store(ctx context.Context, path string, envs []event.Envelope, timeout time.Duration) error {
	db, err := sqlite.Open(path)
	if err != nil {
		return err
	}
	srv, err := collector.New(collector.Config{Store: db, Version: "modeled"})
	if err != nil {
		db.Close()
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Shutdown(ctx)
		return err
	}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())
	base := "http://" + l.Addr().String()
	client := &http.Client{Timeout: time.Minute}
	for chunk := range slices.Chunk(envs, 1000) {
		body, err := json.Marshal(map[string][]event.Envelope{"envelopes": chunk})
		if err != nil {
			return err
		}
		res, err := client.Post(base+"/v1/events", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("POST /v1/events: %d %s", res.StatusCode, b)
		}
	}
	for deadline := time.Now().Add(timeout); ; {
		current, err := allCurrent(client, base)
		if err != nil {
			return err
		}
		if current {
			return srv.Shutdown(ctx)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the model was not stored within %v", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// allCurrent reports whether the collector lists sessions and every one's
// model reflects all of its events.
func allCurrent(c *http.Client, base string) (bool, error) {
	n := 0
	for cursor := ""; ; {
		res, err := c.Get(base + "/v1/sessions?limit=1000&cursor=" + url.QueryEscape(cursor))
		if err != nil {
			return false, err
		}
		var page collector.SessionsResponse
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err != nil {
			return false, err
		}
		for _, s := range page.Sessions {
			if s.DerivedSeq != s.LastSeq {
				return false, nil
			}
			n++
		}
		if cursor = page.NextCursor; cursor == "" {
			return n > 0, nil
		}
	}
}
