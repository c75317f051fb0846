package main

import (
	"context"
	"errors"
	"fmt"
	"io"

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
	return exportOTLP(ctx, st, ids, c, o.Stdout)
}

// exportOTLP sends the traces of the stored sessions ids to the receiver c
// (docs/otlp.md), one line per session on stdout.
func exportOTLP(ctx context.Context, st store.Store, ids []string, c *otlp.Client, stdout io.Writer) error {
	url, err := c.URL()
	if err != nil {
		return err
	}
	total := 0
	for _, id := range ids {
		n, err := otlp.ExportSession(ctx, st, id, c.Send, 0)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("cannot export session %s: it has no model yet (let `hookwatch serve` run on its database once)", id)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "session %s: %s (trace %x)\n", id, counted(n, "span"), otlp.TraceID(id))
		total += n
	}
	fmt.Fprintf(stdout, "%s, %s sent to %s\n", counted(len(ids), "session"), counted(total, "span"), url)
	return nil
}
