//go:build !linux

package treewatch

import "context"

// Watcher is not available on this platform.
type Watcher struct{}

// New reports that this platform offers no notification: poll instead.
func New(ctx context.Context, root string) (*Watcher, error) { return nil, ErrUnsupported }

// Wake never receives.
func (w *Watcher) Wake() <-chan struct{} { return nil }

// Take reports nothing.
func (w *Watcher) Take() Changes { return Changes{} }
