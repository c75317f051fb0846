//go:build !linux

package spool

import "context"

// Notify reports that this platform offers no notification: poll instead.
func (s *Spool) Notify(ctx context.Context) (ch <-chan struct{}, ok bool) { return nil, false }
