//go:build !linux

package spool

import "context"

// Notify reports, with nil, that this platform offers no notification:
// poll instead.
func (s *Spool) Notify(ctx context.Context) *Notifier { return nil }

// Discard is Linux's (notify_linux.go); nothing is ever notified here.
func (n *Notifier) Discard() {}
