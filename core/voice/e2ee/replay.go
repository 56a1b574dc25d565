package e2ee

// ReplayWindow is the width of the replay window per key generation (2.56 s of 20 ms frames): a
// frame up to ReplayWindow-1 counters behind the highest one opened may still be opened once;
// one ReplayWindow or more behind is refused with ErrTooOld.
const ReplayWindow = 128

// window is a sliding bitmap of the counters opened under one key generation: bit d of bits says
// whether counter top-d has been opened. The zero value is an empty window.
type window struct {
	started bool
	top     uint64    // highest counter opened
	bits    [2]uint64 // bits[0] bit d: counter top-d; bits[1] bit d: counter top-64-d
}

// check reports whether counter c may be opened: it is ahead of the window, or inside it and not
// yet opened. It changes nothing.
func (w *window) check(c uint64) error {
	if !w.started || c > w.top {
		return nil
	}
	d := w.top - c
	if d >= ReplayWindow {
		return ErrTooOld
	}
	if w.bits[d/64]>>(d%64)&1 != 0 {
		return ErrReplay
	}
	return nil
}

// mark records counter c as opened; check(c) must have allowed it.
func (w *window) mark(c uint64) {
	if !w.started {
		*w = window{started: true, top: c, bits: [2]uint64{1, 0}}
		return
	}
	if c > w.top {
		w.shift(c - w.top)
		w.top = c
		w.bits[0] |= 1
		return
	}
	d := w.top - c
	w.bits[d/64] |= 1 << (d % 64)
}

// shift moves the bitmap s counters forward: bit d becomes bit d+s, and bits that leave the
// window are forgotten.
func (w *window) shift(s uint64) {
	switch {
	case s >= 128:
		w.bits = [2]uint64{}
	case s >= 64:
		w.bits = [2]uint64{0, w.bits[0] << (s - 64)}
	default:
		// s in 1..63: bits[0]'s top s bits move to bits[1]'s bottom.
		w.bits = [2]uint64{w.bits[0] << s, w.bits[1]<<s | w.bits[0]>>(64-s)}
	}
}
