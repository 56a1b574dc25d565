package channels

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// Service serves the routes of guild channels. Set its fields before Register.
type Service struct {
	*guildaccess.Base
}

// Register adds the routes of guild channels to mux (paths relative to the API base): GET
// /guilds/{guild_id}/channels and Modify Channel (PATCH /channels/{channel_id}: name, topic and
// the slowmode interval rate_limit_per_user, rule VER-1). GET /channels/{channel_id} shares its
// path with the DM route: see Shared.
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("GET /guilds/{guild_id}/channels", s.Route(s.channels))
	mux.HandleFunc("PATCH /channels/{channel_id}", s.Route(s.modifyChannel))
}

// Shared are the routes of guild channels whose patterns the DM routes share (see
// guildaccess.Base.Shared): GET /channels/{channel_id}.
func (s *Service) Shared() guildaccess.Routes {
	return guildaccess.Routes{"GET /channels/{channel_id}": s.getChannel}
}

// getChannel serves GET /channels/{channel_id} for a guild channel.
func (s *Service) getChannel(q *guildaccess.Caller) (any, error) {
	ch, _, _, err := s.GuildChannel(q)
	if err != nil {
		return nil, err
	}
	return guildaccess.FullChannel(q.Ctx, s.Store, ch)
}

// MayLink tells whether the user may link the channel to a lobby: a text channel of a guild the
// user owns or manages channels of.
func MayLink(ctx context.Context, st store.Store, userID uint64, ch *store.GuildChannel) (bool, error) {
	if ch.Type != wire.ChannelGuildText {
		return false, nil
	}
	g, err := st.GetGuild(ctx, ch.GuildID)
	if err != nil {
		return false, err
	}
	perms, member, err := guildaccess.Permissions(ctx, st, g, userID)
	return member && perms&guildaccess.PermManageChannels != 0, err
}

// channels serves GET /guilds/{guild_id}/channels to a member: the channels by position (GCH-1),
// from Nov 16, 2026 only those the member can view (GCL-1).
func (s *Service) channels(q *guildaccess.Caller) (any, error) {
	id, err := httpx.PathID(q.Request, "guild_id")
	if err != nil {
		return nil, err
	}
	ctx := q.Ctx
	g, err := s.Store.GetGuild(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownGuild()
	}
	if err != nil {
		return nil, err
	}
	perms, member, err := guildaccess.Permissions(ctx, s.Store, g, q.UserID)
	if err != nil {
		return nil, err
	}
	if !member {
		return nil, wire.MissingAccess()
	}
	list, err := s.Store.ListGuildChannels(ctx, g.ID)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	list, err = guildaccess.VisibleChannels(list, now, func(c *store.GuildChannel) (uint64, error) { // rule GCL-1
		return guildaccess.ChannelPermissions(ctx, s.Store, g, c, q.UserID)
	})
	if err != nil {
		return nil, err
	}
	out := make([]wire.GuildChannel, 0, len(list))
	for i := range list {
		c := &list[i]
		ch := guildaccess.ChannelObject(c)
		ch.IsLinkable = c.Type == wire.ChannelGuildText && perms&guildaccess.PermManageChannels != 0
		if ch.LinkedLobby, err = LinkedLobby(ctx, s.Store, c.ID, now); err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// LinkedLobby returns the live lobby linked to the channel, or nil.
func LinkedLobby(ctx context.Context, st store.Store, channelID uint64, now time.Time) (*wire.LinkedLobby, error) {
	link, err := st.GetChannelLink(ctx, channelID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l, err := st.GetLobby(ctx, link.LobbyID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !now.Before(l.ExpiresAt)) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &wire.LinkedLobby{ApplicationID: wire.Snowflake(l.AppID), LobbyID: wire.Snowflake(l.ID)}, nil
}

// modifyChannel serves PATCH /channels/{channel_id} for a guild channel: needs MANAGE_CHANNELS in
// the channel (50013); name 1 to 100 characters, topic at most 1024 (null or "" clears it) and
// rate_limit_per_user 0 to 21600 seconds (0 turns slowmode off), on text channels. Answers with
// the channel.
func (s *Service) modifyChannel(q *guildaccess.Caller) (any, error) {
	var body wire.ModifyChannel
	if err := httpx.DecodeJSON(q.Request, &body); err != nil {
		return nil, err
	}
	name, setName, err := httpx.OptionalString("name", body.Name)
	if err != nil {
		return nil, err
	}
	if setName {
		if err := guildaccess.CheckName("name", name); err != nil {
			return nil, err
		}
	}
	topic, setTopic, err := httpx.OptionalString("topic", body.Topic)
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(topic) > wire.MaxTopicChars || !utf8.ValidString(topic) {
		return nil, wire.InvalidAt("topic", "BASE_TYPE_MAX_LENGTH", "Must be 1024 or fewer in length.")
	}
	setRate := len(body.RateLimitPerUser) > 0
	rate, err := httpx.IntField("rate_limit_per_user", body.RateLimitPerUser, 0, wire.MaxRateLimitPerUser)
	if err != nil {
		return nil, err
	}
	ch, _, perms, err := s.GuildChannel(q)
	if err != nil {
		return nil, err
	}
	if perms&guildaccess.PermManageChannels == 0 {
		return nil, wire.MissingPermissions()
	}
	if (setTopic || setRate) && !guildaccess.TextChannel(ch.Type) {
		return nil, wire.InvalidAt("rate_limit_per_user", "CHANNEL_TYPE_INVALID", "Only text channels have a topic and slowmode.")
	}
	cs, err := s.Store.GetChannelSettings(q.Ctx, ch.ID)
	if err != nil {
		return nil, err
	}
	if setTopic {
		cs.Topic = topic
	}
	if setRate {
		cs.RateLimitPerUser = rate
	}
	err = s.Store.WithTx(q.Ctx, func(st store.Store) error {
		if setName {
			if err := st.RenameGuildChannel(q.Ctx, ch.ID, name); err != nil {
				return err
			}
		}
		return st.PutChannelSettings(q.Ctx, cs)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownChannel()
	}
	if err != nil {
		return nil, err
	}
	if ch, err = s.Store.GetGuildChannel(q.Ctx, ch.ID); err != nil {
		return nil, err
	}
	return guildaccess.FullChannel(q.Ctx, s.Store, ch)
}
