package core

import (
	"net/http"
	"strconv"

	"sdkpp/core/rest"
	"sdkpp/server/wire"
)

// LinkedChannel is the guild channel linked to a lobby.
type LinkedChannel struct {
	id, guildID uint64
	name        string
}

// Clone returns a copy.
func (l *LinkedChannel) Clone() *LinkedChannel { v := *l; return &v }

// Id returns the channel's id.
func (l *LinkedChannel) Id() uint64 { return l.id }

// Name returns the channel's name.
func (l *LinkedChannel) Name() string { return l.name }

// GuildId returns the id of the channel's guild.
func (l *LinkedChannel) GuildId() uint64 { return l.guildID }

// LinkedChannel returns the lobby's linked channel, or nil when none.
func (h *LobbyHandle) LinkedChannel() *LinkedChannel {
	lc := h.lobby().LinkedChannel
	if lc == nil {
		return nil
	}
	return &LinkedChannel{id: uint64(lc.ID), guildID: uint64(lc.GuildID), name: lc.Name}
}

// Connected reports whether the member has a live gateway session of the game.
func (h *LobbyMemberHandle) Connected() bool { return h.member().Connected }

// LinkChannelToLobby links a guild text channel to a lobby; the player must be a member with
// CanLinkLobby and may manage the channel's guild channels.
func (c *Client) LinkChannelToLobby(lobbyId, channelId uint64, cb Callback[func(*ClientResult)]) {
	id := wire.Snowflake(channelId)
	c.channelLinking(lobbyId, &id, "LinkChannelToLobby", cb)
}

// UnlinkChannelFromLobby removes the lobby's linked channel.
func (c *Client) UnlinkChannelFromLobby(lobbyId uint64, cb Callback[func(*ClientResult)]) {
	c.channelLinking(lobbyId, nil, "UnlinkChannelFromLobby", cb)
}

func (c *Client) channelLinking(lobbyId uint64, channel *wire.Snowflake, what string, cb Callback[func(*ClientResult)]) {
	auth := c.authHeader()
	if auth == "" {
		once := c.scope.Once(func() { cb.Fn(destroyed()) }, cb.Release)
		once.Fire(func() { cb.Fn(resultOf(errNotReady)) })
		return
	}
	c.resultCall(rest.Request{Method: http.MethodPatch, Path: "/lobbies/" + strconv.FormatUint(lobbyId, 10) + "/channel-linking",
		Auth: auth, JSON: wire.ChannelLinkingRequest{ChannelID: channel}}, what, cb, nil)
}
