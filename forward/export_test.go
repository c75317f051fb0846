package forward

import "time"

// SetArchivePruneEvery sets how often a forwarder looks for an archive
// past its age, for the test's duration.
func SetArchivePruneEvery(d time.Duration) (restore func()) {
	was := archivePruneEvery
	archivePruneEvery = d
	return func() { archivePruneEvery = was }
}
