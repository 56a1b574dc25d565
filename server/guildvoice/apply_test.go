package guildvoice_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"sdkpp/server/guildvoice"
)

// Changes another node shared become this node's states without a dispatch (the service has no
// hub or store here), and the channels' start times are the ones that node set.
func TestApplyTakesAnotherNodesChanges(t *testing.T) {
	const guild, lounge, den = 1, 10, 11
	s := &guildvoice.Service{}
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		name    string
		change  guildvoice.Change
		users   []uint64 // in the guild's states, by user id
		starts  map[uint64]time.Time
		channel uint64 // user 7's channel
	}{
		{"join", guildvoice.Change{Guild: guild, User: 7, Session: "s7", Channel: lounge, Start: start.UnixNano()},
			[]uint64{7}, map[uint64]time.Time{lounge: start}, lounge},
		{"another joins", guildvoice.Change{Guild: guild, User: 8, Session: "s8", Channel: lounge, Start: start.UnixNano()},
			[]uint64{7, 8}, map[uint64]time.Time{lounge: start}, lounge},
		{"move", guildvoice.Change{Guild: guild, User: 7, Session: "s7", Channel: den, Start: start.Add(time.Minute).UnixNano()},
			[]uint64{7, 8}, map[uint64]time.Time{lounge: start, den: start.Add(time.Minute)}, den},
		{"mute", guildvoice.Change{Guild: guild, User: 7, Session: "s7", Channel: den, SelfMute: true, Start: start.Add(time.Minute).UnixNano()},
			[]uint64{7, 8}, map[uint64]time.Time{lounge: start, den: start.Add(time.Minute)}, den},
		{"the other leaves", guildvoice.Change{Guild: guild, User: 8},
			[]uint64{7}, map[uint64]time.Time{den: start.Add(time.Minute)}, den},
		{"a leave twice", guildvoice.Change{Guild: guild, User: 8},
			[]uint64{7}, map[uint64]time.Time{den: start.Add(time.Minute)}, den},
		{"the last leaves", guildvoice.Change{Guild: guild, User: 7},
			nil, map[uint64]time.Time{}, 0},
	}
	for _, st := range steps {
		s.Apply(st.change)
		var users []uint64
		for _, v := range s.States(guild) {
			users = append(users, uint64(v.UserID))
		}
		assert.Equal(t, st.users, users, st.name)
		got := map[uint64]time.Time{}
		for ch, at := range s.StartTimes(guild) {
			got[ch] = at.UTC()
		}
		assert.Equal(t, st.starts, got, st.name)
		assert.Equal(t, st.channel, s.Channel(guild, 7), st.name)
	}
}
