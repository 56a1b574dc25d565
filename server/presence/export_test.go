package presence

// OfflineMarks returns how many users offline the service keeps the mark of, and how many
// entries its order of them holds (forgotten ones excluded).
func (s *Service) OfflineMarks() (marks, order int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.gone), s.offline.len()
}

// PruneBatch is pruneBatch, for the tests.
const PruneBatch = pruneBatch
