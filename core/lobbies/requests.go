package lobbies

import (
	"net/http"
	"strconv"

	"sdkpp/core/rest"
	"sdkpp/core/tunnel"
	"sdkpp/wire"
)

// path is the route of lobby id, followed by rest: one string made, where a concatenation would
// make the id's text first (a lobby message's path is made for every message sent).
func path(id uint64, rest string) string {
	var buf [64]byte
	b := strconv.AppendUint(append(buf[:0], "/lobbies/"...), id, 10)
	return string(append(b, rest...))
}

// CreateOrJoin is the request that creates the lobby of secret for the game, or joins it, and
// sets the lobby's and the player's member metadata.
func CreateOrJoin(auth, secret string, lobbyMetadata, memberMetadata map[string]string) rest.Request {
	return rest.Request{Method: http.MethodPut, Path: "/lobbies", Auth: auth, JSON: wire.CreateOrJoinLobbyRequest{
		Secret: secret, LobbyMetadata: lobbyMetadata, MemberMetadata: memberMetadata}}
}

// Leave is the request that makes the player leave lobby id.
func Leave(auth string, id uint64) rest.Request {
	return rest.Request{Method: http.MethodDelete, Path: path(id, "/members/@me"), Auth: auth}
}

// SendMessage is the request that sends a message to lobby id, with a fresh nonce that the
// service enforces, so that a repeat (over HTTP after the gateway) is safe.
func SendMessage(auth string, id uint64, content string, metadata map[string]string) rest.Request {
	return rest.Request{Method: http.MethodPost, Path: path(id, "/messages"), Auth: auth,
		JSON: wire.LobbyMessageRequest{Content: content, Metadata: metadata, Nonce: tunnel.NewNonce(), EnforceNonce: true}}
}

// GuildInvite is the request for a single-use invite of the player to the guild of lobby id's
// linked channel.
func GuildInvite(auth string, id uint64) rest.Request {
	return rest.Request{Method: http.MethodPost, Auth: auth, Path: path(id, "/members/@me/invites")}
}

// LinkChannel is the request that links channel to lobby id, or unlinks it when channel is nil.
func LinkChannel(auth string, id uint64, channel *wire.Snowflake) rest.Request {
	return rest.Request{Method: http.MethodPatch, Path: path(id, "/channel-linking"), Auth: auth,
		JSON: wire.ChannelLinkingRequest{ChannelID: channel}}
}
