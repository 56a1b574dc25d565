package lobbies

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/rest"
	"sdkpp/wire"
)

func TestRequests(t *testing.T) {
	ch := wire.Snowflake(9)
	for name, tc := range map[string]struct {
		got, want rest.Request
	}{
		"create or join": {CreateOrJoin("B t", "s", map[string]string{"a": "1"}, nil), rest.Request{Method: http.MethodPut, Path: "/lobbies", Auth: "B t",
			JSON: wire.CreateOrJoinLobbyRequest{Secret: "s", LobbyMetadata: map[string]string{"a": "1"}}}},
		"leave":        {Leave("B t", 5), rest.Request{Method: http.MethodDelete, Path: "/lobbies/5/members/@me", Auth: "B t"}},
		"guild invite": {GuildInvite("B t", 5), rest.Request{Method: http.MethodPost, Path: "/lobbies/5/members/@me/invites", Auth: "B t"}},
		"link":         {LinkChannel("B t", 5, &ch), rest.Request{Method: http.MethodPatch, Path: "/lobbies/5/channel-linking", Auth: "B t", JSON: wire.ChannelLinkingRequest{ChannelID: &ch}}},
		"unlink":       {LinkChannel("B t", 5, nil), rest.Request{Method: http.MethodPatch, Path: "/lobbies/5/channel-linking", Auth: "B t", JSON: wire.ChannelLinkingRequest{}}},
	} {
		assert.Equal(t, tc.want, tc.got, name)
	}
}

// Each message request has its own nonce, which the service enforces.
func TestSendMessage(t *testing.T) {
	a, b := SendMessage("B t", 5, "hi", nil), SendMessage("B t", 5, "hi", nil)
	assert.Equal(t, "/lobbies/5/messages", a.Path)
	ma, ok := a.JSON.(wire.LobbyMessageRequest)
	require.True(t, ok)
	mb := b.JSON.(wire.LobbyMessageRequest)
	assert.True(t, ma.EnforceNonce)
	assert.NotEmpty(t, ma.Nonce)
	assert.NotEqual(t, ma.Nonce, mb.Nonce)
	assert.Equal(t, "hi", ma.Content)
}

func TestMembers(t *testing.T) {
	l := wire.Lobby{Members: []wire.LobbyMember{{ID: 3}, {ID: 1, Connected: true}}}
	assert.Equal(t, []uint64{3, 1}, MemberIDs(l))
	assert.Nil(t, MemberIDs(wire.Lobby{}))
	m, ok := Member(l, 1)
	require.True(t, ok)
	assert.True(t, m.Connected)
	_, ok = Member(l, 2)
	assert.False(t, ok)
}
