package collector

import "time"

// QueuedForTest returns the number of batches waiting for the writer.
func (s *Server) QueuedForTest() int { return len(s.writer.queue) }

// SetPruneEveryForTest sets the interval of the retention passes.
func SetPruneEveryForTest(d time.Duration) { pruneEvery = d }
