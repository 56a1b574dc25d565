package core

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/lobbies"
	"sdkpp/core/records"
	"sdkpp/wire"
)

// GetUserGuilds lists the guilds the player is in.
func (c *Client) GetUserGuilds(cb Callback[ClientGetUserGuildsCallback]) {
	getList(c, "GetUserGuilds", "/users/@me/guilds", cb, func(list []wire.PartialGuild) []*GuildMinimal {
		out := make([]*GuildMinimal, 0, len(list))
		for i := range list {
			out = append(out, records.GuildMinimalOf(&list[i]))
		}
		return out
	})
}

// GetGuildChannels lists the channels of a guild the player is in, sorted by position (rule
// GCH-1).
func (c *Client) GetGuildChannels(guildId uint64, cb Callback[ClientGetGuildChannelsCallback]) {
	if guildId == 0 { // refused before the authorization is looked at
		resultOnce1(c, cb).Fire(func() { cb.Fn(resultOf(sdkerr.Invalid("GetGuildChannels: guildId is 0")), nil) })
		return
	}
	getList(c, "GetGuildChannels", "/guilds/"+strconv.FormatUint(guildId, 10)+"/channels", cb, func(list []wire.GuildChannel) []*GuildChannel {
		slices.SortStableFunc(list, func(a, b wire.GuildChannel) int { return cmp.Compare(a.Position, b.Position) })
		out := make([]*GuildChannel, 0, len(list))
		for i := range list {
			out = append(out, records.GuildChannelOf(&list[i]))
		}
		return out
	})
}

// JoinLinkedLobbyGuild answers with the web URL of a single-use invite, valid one hour and bound
// to the player, to the guild of the lobby's linked channel (core/lobbies.JoinGuildURL, rule
// LOB-5). A provisional player cannot join a guild: merge runs instead and no invite is made.
func (c *Client) JoinLinkedLobbyGuild(lobbyId uint64, merge Callback[ClientProvisionalUserMergeRequiredCallback], cb Callback[ClientJoinLinkedLobbyGuildCallback]) {
	once := c.scope.Once(func() { cb.Fn(destroyed(), "") }, func() {
		for _, r := range []func(){merge.Release, cb.Release} {
			if r != nil {
				r()
			}
		}
	})
	auth := c.authHeader()
	if auth == "" {
		once.Fire(func() { cb.Fn(resultOf(sdkerr.ErrNotReady), "") })
		return
	}
	c.start(func(ctx context.Context) {
		u, err := lobbies.JoinGuildURL(ctx, c.api, auth, lobbyId, c.webBase, func() (bool, bool) {
			me := c.GetCurrentUserV2()
			return me != nil && me.IsProvisional(), me != nil
		})
		switch {
		case errors.Is(err, lobbies.ErrProvisional):
			c.logf(LoggingSeverityInfo, "JoinLinkedLobbyGuild: %v", err)
			once.Fire(merge.Fn)
		case err != nil:
			c.logf(LoggingSeverityWarning, "JoinLinkedLobbyGuild failed: %v", err)
			once.Fire(func() { cb.Fn(resultOf(err), "") })
		default:
			once.Fire(func() { cb.Fn(success(), u) })
		}
	})
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
