package wire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// CON-1, VER-3: each date of the connection rules, a moment before and a moment after.
func TestConnectionVisible(t *testing.T) {
	const eps = time.Nanosecond
	old := ConnectionsNewHiddenFrom.Add(-eps)
	cases := []struct {
		typ          string
		created, now time.Time
		want         bool
	}{
		{"steam", ConnectionsSecondHiddenFrom, ConnectionsSecondHiddenFrom.Add(eps), true},
		{ConnectionProviderLegacyFirst, old, ConnectionsNewHiddenFrom, true},
		{ConnectionProviderLegacyFirst, ConnectionsNewHiddenFrom, ConnectionsNewHiddenFrom, false},
		{ConnectionProviderLegacyFirst, old, ConnectionsLegacyFirstHiddenFrom.Add(-eps), true},
		{ConnectionProviderLegacyFirst, old, ConnectionsLegacyFirstHiddenFrom, false},
		{ConnectionProviderSecond, old, ConnectionsSecondHiddenFrom.Add(-eps), true},
		{ConnectionProviderSecond, old, ConnectionsSecondHiddenFrom.Add(eps), false},
		{ConnectionProviderSecond, ConnectionsNewHiddenFrom.Add(eps), ConnectionsNewHiddenFrom.Add(eps), false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, ConnectionVisible(tc.typ, tc.created, tc.now), "CON-1 (VER-3): %s made %s, at %s", tc.typ, tc.created, tc.now)
	}
}

// APP-1: flags carries bits 0 to 30 as an integer, flags_new every bit as a string.
func TestApplicationFlags(t *testing.T) {
	for _, tc := range []struct {
		all      uint64
		flags    int32
		flagsNew string
	}{
		{0, 0, "0"}, {AppFlagGatewayMessageContent, 1 << 18, "262144"}, {1<<30 | 1<<31, 1 << 30, "3221225472"},
		{1<<62 | 1, 1, "4611686018427387905"},
	} {
		f, n := ApplicationFlags(tc.all)
		assert.Equal(t, tc.flags, f, "APP-1")
		assert.Equal(t, tc.flagsNew, n, "APP-1")
	}
}

// ST-3: INACTIVE = 1, ENDING = 2, by the period's end and the cancellation.
func TestSubscriptionStatus(t *testing.T) {
	end := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, 0, SubscriptionStatus(end, time.Time{}, end.Add(-1)), "ST-3")
	assert.Equal(t, 2, SubscriptionStatus(end, end.Add(-time.Hour), end.Add(-1)), "ST-3")
	assert.Equal(t, 1, SubscriptionStatus(end, end.Add(-time.Hour), end), "ST-3")
	assert.Equal(t, 1, SubscriptionStatus(end, time.Time{}, end.Add(1)), "ST-3")
}
