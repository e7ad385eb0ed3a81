package misgpu

// StallWatch is the engine's rule for when rounds stop paying (see
// stallWatch), for drivers that queue rounds of their own (the multi-GPU
// driver): after 64 rounds, two checks in a row that each find the live
// count down by less than a 64th.
type StallWatch struct{ w stallWatch }

// Stalled takes the live count after round pass and says whether the
// rounds stopped paying; once it says so, it keeps saying so.
func (s *StallWatch) Stalled(pass int, live uint32) bool {
	if s.w.stopped {
		return true
	}
	return s.w.stalled(pass, live)
}
