package core

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"sdkpp/core/internal/opt"
	"sdkpp/core/lobbies"
	"sdkpp/core/rest"
	"sdkpp/wire"
)

// guildChannelOf converts the wire form.
func guildChannelOf(w *wire.GuildChannel) *GuildChannel {
	g := &GuildChannel{id: uint64(w.ID), name: w.Name, typ: ChannelType(w.Type), position: int32(w.Position), parentId: opt.Convert[uint64](w.ParentID),
		isLinkable: w.IsLinkable, isViewableAndWriteableByAllMembers: w.IsViewableAndWriteableByAllMembers}
	if l := w.LinkedLobby; l != nil {
		g.linkedLobby = &LinkedLobby{applicationId: uint64(l.ApplicationID), lobbyId: uint64(l.LobbyID)}
	}
	return g
}

// GetUserGuilds lists the guilds the player is in.
func (c *Client) GetUserGuilds(cb Callback[ClientGetUserGuildsCallback]) {
	getList(c, "GetUserGuilds", "/users/@me/guilds", cb, func(list []wire.PartialGuild) []*GuildMinimal {
		out := make([]*GuildMinimal, 0, len(list))
		for _, g := range list {
			out = append(out, &GuildMinimal{id: uint64(g.ID), name: g.Name})
		}
		return out
	})
}

// GetGuildChannels lists the channels of a guild the player is in, sorted by position (rule
// GCH-1).
func (c *Client) GetGuildChannels(guildId uint64, cb Callback[ClientGetGuildChannelsCallback]) {
	if guildId == 0 { // refused before the authorization is looked at
		resultOnce1(c, cb).Fire(func() { cb.Fn(resultOf(invalid("GetGuildChannels: guildId is 0")), nil) })
		return
	}
	getList(c, "GetGuildChannels", "/guilds/"+strconv.FormatUint(guildId, 10)+"/channels", cb, func(list []wire.GuildChannel) []*GuildChannel {
		slices.SortStableFunc(list, func(a, b wire.GuildChannel) int { return cmp.Compare(a.Position, b.Position) })
		out := make([]*GuildChannel, 0, len(list))
		for i := range list {
			out = append(out, guildChannelOf(&list[i]))
		}
		return out
	})
}

// JoinLinkedLobbyGuild makes a single-use invite, valid one hour, to the guild of the lobby's
// linked channel and answers with its web URL, the service's invite page where the player signs
// in and joins (rule LOB-5). The invite is bound to the player: nobody else may use it. A
// provisional player cannot join a guild: merge runs instead and no request is made.
func (c *Client) JoinLinkedLobbyGuild(lobbyId uint64, merge Callback[ClientProvisionalUserMergeRequiredCallback], cb Callback[ClientJoinLinkedLobbyGuildCallback]) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), "") }, func() {
		if merge.Release != nil {
			merge.Release()
		}
		if cb.Release != nil {
			cb.Release()
		}
	})
	auth := c.authHeader()
	if auth == "" {
		once.Fire(func() { cb.Fn(resultOf(errNotReady), "") })
		return
	}
	c.start(func(ctx context.Context) {
		provisional, err := c.isProvisional(ctx, auth)
		if err == nil && provisional {
			c.logf(LoggingSeverityInfo, "JoinLinkedLobbyGuild: a provisional account must be merged first")
			once.Fire(merge.Fn)
			return
		}
		var inv wire.InviteCode
		if err == nil {
			err = c.api.Do(ctx, lobbies.GuildInvite(auth, lobbyId), &inv)
		}
		if err != nil {
			c.logf(LoggingSeverityWarning, "JoinLinkedLobbyGuild failed: %v", err)
			once.Fire(func() { cb.Fn(resultOf(err), "") })
			return
		}
		u := strings.TrimRight(c.webBase, "/") + "/invite/" + inv.Code
		once.Fire(func() { cb.Fn(Success(), u) })
	})
}

// isProvisional reports whether the signed-in user is a provisional account: from the cache once
// the client is Ready, else from the service.
func (c *Client) isProvisional(ctx context.Context, auth string) (bool, error) {
	if me := c.GetCurrentUserV2(); me != nil {
		return me.IsProvisional(), nil
	}
	var u wire.User
	if err := c.api.Do(ctx, rest.Request{Path: "/users/@me", Auth: auth}, &u); err != nil {
		return false, err
	}
	return u.IsProvisional, nil
}

// LinkedChannel returns the lobby's linked channel, or nil when none.
func (h *LobbyHandle) LinkedChannel() *LinkedChannel {
	lc := h.lobby().LinkedChannel
	if lc == nil {
		return nil
	}
	return &LinkedChannel{id: uint64(lc.ID), guildId: uint64(lc.GuildID), name: lc.Name}
}

// LinkChannelToLobby links a guild text channel to a lobby; the player must be a member with
// CanLinkLobby and may manage the channel's guild channels.
func (c *Client) LinkChannelToLobby(lobbyId, channelId uint64, cb Callback[ClientLinkOrUnlinkChannelCallback]) {
	id := wire.Snowflake(channelId)
	c.channelLinking(lobbyId, &id, "LinkChannelToLobby", cb)
}

func (c *Client) channelLinking(lobbyId uint64, channel *wire.Snowflake, what string, cb Callback[func(*ClientResult)]) {
	authCall(c, what, nil, cb, func(ctx context.Context, auth string) error {
		return c.api.Do(ctx, lobbies.LinkChannel(auth, lobbyId, channel), nil)
	})
}
