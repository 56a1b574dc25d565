package device

import (
	"testing"

	"github.com/gen2brain/malgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiff(t *testing.T) {
	mic := Info{ID: "01", Name: "mic", IsDefault: true}
	headset := Info{ID: "02", Name: "headset"}
	speaker := Info{ID: "03", Name: "speaker", IsDefault: true}
	headsetDefault := Info{ID: "02", Name: "headset", IsDefault: true}
	micNotDefault := Info{ID: "01", Name: "mic"}

	for _, tc := range []struct {
		name          string
		before, after List
		want          []Event
	}{
		{"nothing", List{Capture: []Info{mic}}, List{Capture: []Info{mic}}, nil},
		{"added", List{Capture: []Info{mic}}, List{Capture: []Info{mic, headset}},
			[]Event{{Added, Capture, headset}}},
		{"removed", List{Playback: []Info{speaker}}, List{},
			[]Event{{Removed, Playback, speaker}}},
		{"plugged in and made default",
			List{Capture: []Info{mic}},
			List{Capture: []Info{micNotDefault, headsetDefault}},
			[]Event{{Added, Capture, headsetDefault}, {DefaultChanged, Capture, micNotDefault}}},
		{"same id in the other kind is another device",
			List{Capture: []Info{mic}}, List{Playback: []Info{mic}},
			[]Event{{Removed, Capture, mic}, {Added, Playback, mic}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(tc.before, tc.after)
			if tc.want == nil {
				assert.Empty(t, got)
				return
			}
			assert.ElementsMatch(t, tc.want, got)
		})
	}
}

func TestParseIDInvertsMalgoString(t *testing.T) {
	for _, name := range []string{"vsink", "vsink.monitor", "alsa_output.pci-0000_00_1f.3.analog-stereo"} {
		var raw malgo.DeviceID
		copy(raw[:], name)
		got, err := parseID(raw.String())
		require.NoError(t, err)
		assert.Equal(t, raw, got, name)
	}
	var zero malgo.DeviceID
	got, err := parseID(zero.String())
	require.NoError(t, err)
	assert.Equal(t, zero, got)

	for _, bad := range []string{"zz", "abc", string(make([]byte, 2000))} {
		_, err := parseID(bad)
		assert.ErrorIs(t, err, ErrNoDevice, bad)
	}
}

func TestLookup(t *testing.T) {
	var raw malgo.DeviceID
	copy(raw[:], "vsink")
	sink := Info{ID: raw.String(), Name: "vsink", IsDefault: true}
	list := List{Playback: []Info{{ID: "01", Name: "other"}, sink}}

	info, id, err := lookup(list, Playback, "")
	require.NoError(t, err)
	assert.Equal(t, sink, info, "empty id: the default device")
	assert.Equal(t, malgo.DeviceID{}, id, "and miniaudio's own default")

	info, id, err = lookup(list, Playback, sink.ID)
	require.NoError(t, err)
	assert.Equal(t, sink, info)
	assert.Equal(t, raw, id)

	_, _, err = lookup(list, Capture, sink.ID)
	assert.ErrorIs(t, err, ErrNoDevice)
}

func TestChangeAndKindNames(t *testing.T) {
	assert.Equal(t, "added", Added.String())
	assert.Equal(t, "removed", Removed.String())
	assert.Equal(t, "default changed", DefaultChanged.String())
	assert.Equal(t, "capture", Capture.String())
	assert.Equal(t, "playback", Playback.String())
}
