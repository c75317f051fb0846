package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/store"
)

// exportOTLPFormat is `hookwatch export --format otlp`.
func exportOTLPFormat(ctx context.Context, st store.Store, ids []string, o exportOptions) error {
	c, err := o.OTLP.client()
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if c == nil {
		return fmt.Errorf("%w: give --otlp-endpoint URL (or HOOKWATCH_OTLP_ENDPOINT) with --format otlp", errUsage)
	}
	// Nothing listening at the endpoint before the first span went out is
	// a wrong endpoint or a receiver not started, which retrying will not
	// mend: said at once. Refused later, the receiver is waited for.
	c.FailFast = true
	err = exportOTLP(ctx, st, ids, c, o.Stdout, o.Done)
	if errors.Is(err, syscall.ECONNREFUSED) {
		url, _ := c.URL()
		return fmt.Errorf("cannot export to %s: connection refused, nothing listens there: check --otlp-endpoint (or HOOKWATCH_OTLP_ENDPOINT) and that the OTLP/HTTP receiver is running", url)
	}
	return err
}

// exportOTLP sends the traces of the stored sessions ids to the receiver c
// (docs/otlp.md), one line per session on stdout, counting in done what it
// sent.
func exportOTLP(ctx context.Context, st store.Store, ids []string, c *otlp.Client, stdout io.Writer, done *exportDone) error {
	url, err := c.URL()
	if err != nil {
		return err
	}
	done.unit, done.where = "span", "sent to "+url
	total := 0
	for _, id := range ids {
		n, err := otlp.ExportSession(ctx, st, id, c.Send, 0)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("cannot export session %s: it has no model yet (let `hookwatch serve` run on its database once)", id)
		}
		if err != nil {
			done.cut = fmt.Sprintf("session %s was in progress: some of its spans may have been sent (sent again, they keep their ids)", id)
			return err
		}
		fmt.Fprintf(stdout, "session %s: %s (trace %x)\n", id, counted(n, "span"), otlp.TraceID(id))
		total += n
		done.sessions++
		done.items += int64(n)
	}
	fmt.Fprintf(stdout, "%s, %s sent to %s\n", counted(len(ids), "session"), counted(total, "span"), url)
	return nil
}
