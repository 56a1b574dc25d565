package core

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"sdkpp/core/rest"
	"sdkpp/wire"
)

// LinkedChannel is the guild channel linked to a lobby.
type LinkedChannel struct {
	id, guildId uint64
	name        string
}

// Clone returns a copy.
func (l *LinkedChannel) Clone() *LinkedChannel { v := *l; return &v }

// LinkedLobby is the lobby a guild channel is linked to.
type LinkedLobby struct {
	applicationId, lobbyId uint64
}

// NewLinkedLobby returns an empty LinkedLobby.
func NewLinkedLobby() *LinkedLobby { return &LinkedLobby{} }

// Clone returns a copy.
func (l *LinkedLobby) Clone() *LinkedLobby { v := *l; return &v }

// GuildMinimal is a guild the player is in, for a channel-linking UI.
type GuildMinimal struct {
	id   uint64
	name string
}

// Clone returns a copy.
func (g *GuildMinimal) Clone() *GuildMinimal { v := *g; return &v }

// GuildChannel is a channel of a guild, for a channel-linking UI (rule GCH-1).
type GuildChannel struct {
	id                                             uint64
	name                                           string
	typ                                            ChannelType
	position                                       int32
	parentId                                       *uint64
	isLinkable, isViewableAndWriteableByAllMembers bool
	linkedLobby                                    *LinkedLobby
}

// guildChannelOf converts the wire form.
func guildChannelOf(w *wire.GuildChannel) *GuildChannel {
	g := &GuildChannel{id: uint64(w.ID), name: w.Name, typ: ChannelType(w.Type), position: int32(w.Position),
		isLinkable: w.IsLinkable, isViewableAndWriteableByAllMembers: w.IsViewableAndWriteableByAllMembers}
	if w.ParentID != nil {
		p := uint64(*w.ParentID)
		g.parentId = &p
	}
	if l := w.LinkedLobby; l != nil {
		g.linkedLobby = &LinkedLobby{applicationId: uint64(l.ApplicationID), lobbyId: uint64(l.LobbyID)}
	}
	return g
}

// Clone returns a deep copy.
func (g *GuildChannel) Clone() *GuildChannel {
	v := *g
	v.parentId = clonePtr(g.parentId)
	v.linkedLobby = clonePtr(g.linkedLobby)
	return &v
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
	if guildId == 0 {
		once := resultOnce1(c, cb)
		once.Fire(func() { cb.Fn(resultOf(invalid("GetGuildChannels: guildId is 0")), nil) })
		return
	}
	getList(c, "GetGuildChannels", "/guilds/"+strconv.FormatUint(guildId, 10)+"/channels", cb, func(list []wire.GuildChannel) []*GuildChannel {
		out := make([]*GuildChannel, 0, len(list))
		for i := range list {
			out = append(out, guildChannelOf(&list[i]))
		}
		slices.SortStableFunc(out, func(a, b *GuildChannel) int { return cmp.Compare(a.position, b.position) })
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
			err = c.api.Do(ctx, rest.Request{Method: http.MethodPost, Auth: auth,
				Path: "/lobbies/" + strconv.FormatUint(lobbyId, 10) + "/members/@me/invites"}, &inv)
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

// Connected reports whether the member has a live gateway session of the game.
func (h *LobbyMemberHandle) Connected() bool { return h.member().Connected }

// LinkChannelToLobby links a guild text channel to a lobby; the player must be a member with
// CanLinkLobby and may manage the channel's guild channels.
func (c *Client) LinkChannelToLobby(lobbyId, channelId uint64, cb Callback[ClientLinkOrUnlinkChannelCallback]) {
	id := wire.Snowflake(channelId)
	c.channelLinking(lobbyId, &id, "LinkChannelToLobby", cb)
}

// UnlinkChannelFromLobby removes the lobby's linked channel.
func (c *Client) UnlinkChannelFromLobby(lobbyId uint64, cb Callback[ClientLinkOrUnlinkChannelCallback]) {
	c.channelLinking(lobbyId, nil, "UnlinkChannelFromLobby", cb)
}

func (c *Client) channelLinking(lobbyId uint64, channel *wire.Snowflake, what string, cb Callback[func(*ClientResult)]) {
	auth := c.authHeader()
	if auth == "" {
		once := resultOnce(c, cb)
		once.Fire(func() { cb.Fn(resultOf(errNotReady)) })
		return
	}
	c.resultCall(rest.Request{Method: http.MethodPatch, Path: "/lobbies/" + strconv.FormatUint(lobbyId, 10) + "/channel-linking",
		Auth: auth, JSON: wire.ChannelLinkingRequest{ChannelID: channel}}, what, cb, nil)
}
