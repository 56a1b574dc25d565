package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/gateway"
)

// A client's drops, its sessions (READY) and the last drop's cause are counted.
func TestWatchCountsSessionsAndDrops(t *testing.T) {
	w := &watch{player: 7}
	w.status(gateway.Connecting, nil)
	w.status(gateway.Ready, nil)
	w.status(gateway.Reconnecting, errors.New("gateway closed the connection: 4000 too far behind"))
	w.status(gateway.Reconnecting, errors.New("gateway: session invalidated"))
	w.status(gateway.Ready, nil)
	assert.EqualValues(t, 2, w.readies.Load())
	assert.EqualValues(t, 2, w.drops.Load())
	require.NotNil(t, w.last.Load())
	assert.Equal(t, "gateway: session invalidated", *w.last.Load())
}

// A fan-out turn that fell short names the members short of it, what their clients went through,
// and nobody else.
func TestShortfallNamesTheShortMembers(t *testing.T) {
	tests := []struct {
		name    string
		members []memberState
		want    string
	}{
		{"one member identified anew", []memberState{
			{index: 0, player: 10, got: 2000, want: 2000, status: gateway.Ready, readies: 1},
			{index: 3, player: 13, got: 0, want: 2000, status: gateway.Ready, readies: 2, drops: 2,
				lastDrop: "gateway: session invalidated"},
		}, "; member 3 (user 13) got 0 of 2000: client Ready, 2 sessions, 2 drops (last: gateway: session invalidated)" +
			", identified anew: what was sent between its sessions is gone"},
		{"a member that never dropped", []memberState{
			{index: 1, player: 11, got: 1800, want: 2000, status: gateway.Ready, readies: 1},
		}, "; member 1 (user 11) got 1800 of 2000: client Ready, 1 sessions, 0 drops"},
		{"data dropped as invalid", []memberState{
			{index: 2, player: 12, got: 1990, want: 2000, status: gateway.Ready, readies: 1, invalid: 10},
		}, "; member 2 (user 12) got 1990 of 2000: client Ready, 1 sessions, 0 drops, 10 dispatches dropped for data that is not valid JSON"},
		{"none short", []memberState{
			{index: 0, player: 10, got: 2000, want: 2000, status: gateway.Ready, readies: 1},
		}, "; every member got its deliveries (counted late)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, shortfall(tt.members))
		})
	}
}
