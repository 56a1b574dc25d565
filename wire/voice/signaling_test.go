package voice

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

func TestStateUpdateDecode(t *testing.T) {
	var u StateUpdate
	require.NoError(t, json.Unmarshal([]byte(`{"guild_id":null,"channel_id":"12","self_mute":true,"self_deaf":false,
		"sdkpp_e2ee_public_keys":"AQID"}`), &u))
	require.NoError(t, u.Check())
	require.NotNil(t, u.ChannelID)
	assert.Equal(t, wire.Snowflake(12), *u.ChannelID)
	assert.Nil(t, u.GuildID)
	assert.True(t, u.SelfMute)
	assert.Equal(t, []byte{1, 2, 3}, u.E2EEPublicKeys)

	var leave StateUpdate
	require.NoError(t, json.Unmarshal([]byte(`{"channel_id":null,"self_mute":false,"self_deaf":false}`), &leave))
	require.NoError(t, leave.Check())
	assert.Nil(t, leave.ChannelID)
}

func TestStateUpdateCheck(t *testing.T) {
	zero, one := wire.Snowflake(0), wire.Snowflake(1)
	tests := []struct {
		name string
		u    StateUpdate
		ok   bool
	}{
		{"join", StateUpdate{ChannelID: &one, E2EEPublicKeys: make([]byte, MaxPublicKeysBytes)}, true},
		{"join without keys (refused later, not malformed)", StateUpdate{ChannelID: &one}, true},
		{"leave", StateUpdate{}, true},
		{"channel 0", StateUpdate{ChannelID: &zero}, false},
		{"guild 0", StateUpdate{GuildID: &zero, ChannelID: &one}, false},
		{"keys too long", StateUpdate{ChannelID: &one, E2EEPublicKeys: make([]byte, MaxPublicKeysBytes+1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ok {
				assert.NoError(t, tt.u.Check())
			} else {
				assert.Error(t, tt.u.Check())
			}
		})
	}
}

func TestKeysCheck(t *testing.T) {
	key := func(user uint64, n int) SealedKey {
		return SealedKey{UserID: wire.Snowflake(user), Sealed: bytes.Repeat([]byte{1}, n)}
	}
	many := make([]SealedKey, MaxParticipants)
	for i := range many {
		many[i] = key(uint64(i+1), 10)
	}
	tests := []struct {
		name string
		k    Keys
		ok   bool
	}{
		{"one", Keys{ChannelID: 1, Keys: []SealedKey{key(2, 80)}}, true},
		{"largest", Keys{ChannelID: 1, Keys: []SealedKey{key(2, MaxSealedKeyBytes)}}, true},
		{"all others", Keys{ChannelID: 1, Keys: many[:MaxParticipants-1]}, true},
		{"no channel", Keys{Keys: []SealedKey{key(2, 80)}}, false},
		{"no keys", Keys{ChannelID: 1}, false},
		{"too many", Keys{ChannelID: 1, Keys: many}, false},
		{"no user", Keys{ChannelID: 1, Keys: []SealedKey{key(0, 80)}}, false},
		{"empty key", Keys{ChannelID: 1, Keys: []SealedKey{key(2, 0)}}, false},
		{"key too long", Keys{ChannelID: 1, Keys: []SealedKey{key(2, MaxSealedKeyBytes+1)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ok {
				assert.NoError(t, tt.k.Check())
			} else {
				assert.Error(t, tt.k.Check())
			}
		})
	}
}

// TestLargestKeysFit checks that MaxKeysPayloadBytes holds the largest valid op 101.
func TestLargestKeysFit(t *testing.T) {
	k := Keys{ChannelID: wire.MaxSnowflake}
	for range MaxParticipants - 1 {
		k.Keys = append(k.Keys, SealedKey{UserID: wire.MaxSnowflake, Sealed: make([]byte, MaxSealedKeyBytes)})
	}
	raw, err := json.Marshal(map[string]any{"op": 101, "d": k})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(raw), MaxKeysPayloadBytes)
}

func TestStateJSON(t *testing.T) {
	ch := wire.Snowflake(5)
	raw, err := json.Marshal(State{ChannelID: &ch, UserID: 7, SessionID: "abc", SelfDeaf: true, E2EEPublicKeys: []byte{9}, SSRC: 3})
	require.NoError(t, err)
	assert.JSONEq(t, `{"guild_id":null,"channel_id":"5","user_id":"7","session_id":"abc","self_mute":false,"self_deaf":true,
		"sdkpp_e2ee_public_keys":"CQ==","sdkpp_ssrc":3}`, string(raw))
	raw, err = json.Marshal(State{UserID: 7, SessionID: "abc"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"guild_id":null,"channel_id":null,"user_id":"7","session_id":"abc","self_mute":false,"self_deaf":false}`, string(raw))
}
