//go:build !linux

package hook

import (
	"io"
	"time"
)

// readBefore reads r as readPayload says, beside the caller (readAside).
func readBefore(r io.Reader, deadline time.Time) readResult {
	return readAside(r, deadline)
}
