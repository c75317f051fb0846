package collector

// QueuedForTest returns the number of batches waiting for the writer.
func (s *Server) QueuedForTest() int { return len(s.writer.queue) }
