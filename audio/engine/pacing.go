package engine

import "sdkpp/audio/pcm"

// Lead bounds: the playback ring holds the speaker's next period plus a lead of up to
// maxLeadPeriods.
const (
	maxLeadPeriods = 4
	// firstCalm is the calm spell, in periods written without a speaker underrun (5 s), after
	// which a period of lead goes again; each underrun doubles it, up to maxCalm (32 s).
	firstCalm = 500
	maxCalm   = 3200
)

// pacing is the lead the engine keeps in the playback ring beyond the speaker's next period. A
// speaker that takes audio while the processing thread is late (a loaded machine, a device that
// takes periods in bursts) plays silence; the lead then grows by the periods it lacked, and a
// calm spell gives one back. Each underrun doubles the calm spell, so that a device that needs
// the lead keeps it instead of lacking audio again every few seconds.
type pacing struct {
	lead      int
	underruns uint64 // the speaker's underrun samples last seen
	calm      int    // periods written since the last underrun or change of lead
	calmSpell int    // periods of calm a period of lead waits for
}

// reset starts over on a stream whose speaker has lacked underruns samples so far.
func (p *pacing) reset(underruns uint64) {
	*p = pacing{underruns: underruns, calmSpell: firstCalm}
}

// rebase takes underruns as the speaker's underrun samples so far without counting them: the
// engine left the ring empty on purpose (nothing to play), the lead it learnt stays.
func (p *pacing) rebase(underruns uint64) { p.underruns = underruns }

// periods returns the lead to keep, given the speaker's underrun samples so far.
func (p *pacing) periods(underruns uint64) int {
	if underruns != p.underruns {
		lacked := (int(underruns-p.underruns) + pcm.PeriodSamples - 1) / pcm.PeriodSamples
		p.underruns = underruns
		p.lead = min(p.lead+lacked, maxLeadPeriods)
		p.calm = 0
		p.calmSpell = min(2*p.calmSpell, maxCalm)
	}
	return p.lead
}

// wrote counts a period written to the speaker.
func (p *pacing) wrote() {
	if p.calm++; p.calm >= p.calmSpell && p.lead > 0 {
		p.lead--
		p.calm = 0
	}
}
