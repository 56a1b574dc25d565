package guildaccess

import (
	"context"
	"errors"

	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// BotNotifier delivers guild events to the bot sessions of the given users whose intents
// include intent (package gateway's Hub).
type BotNotifier interface {
	DispatchBots(userIDs []uint64, intent uint64, event string, data any)
	// DispatchBotsSplit is DispatchBots of with to the sessions whose intents also include
	// split, and of without to the others.
	DispatchBotsSplit(userIDs []uint64, intent, split uint64, event string, with, without any)
}

// MemberJoined tells the guild's bots that userID joined (GUILD_MEMBER_ADD, GW-6).
func (s *Base) MemberJoined(ctx context.Context, guildID, userID uint64) {
	s.MemberChanged(ctx, guildID, userID, gwire.EventGuildMemberAdd)
}

// MemberChanged sends event (GUILD_MEMBER_ADD or GUILD_MEMBER_UPDATE) with userID's member, its
// guild_id set, to the guild's bots.
func (s *Base) MemberChanged(ctx context.Context, guildID, userID uint64, event string) {
	m, err := LoadMember(ctx, s.Store, guildID, userID, true)
	if err != nil {
		s.Logger.Warn("guild member event not sent", "event", event, "guild_id", guildID, "err", err)
		return
	}
	gid := wire.Snowflake(guildID)
	m.GuildID = &gid
	s.MemberEvent(ctx, guildID, event, m)
}

// MemberEvent sends a member event to the guild's bots with GUILD_MEMBERS.
func (s *Base) MemberEvent(ctx context.Context, guildID uint64, event string, data any) {
	if s.Bots != nil {
		s.Bots.DispatchBots(s.BotMembers(ctx, guildID), gwire.IntentGuildMembers, event, data)
	}
}

// BotMembers returns the ids of the guild's bot members (logged and empty on a store failure:
// events are best effort, as the platform's).
func (s *Base) BotMembers(ctx context.Context, guildID uint64) []uint64 {
	var out []uint64
	after := uint64(0)
	for {
		list, err := s.Store.ListGuildMembers(ctx, guildID, after, MaxMembersList)
		if err != nil {
			s.Logger.Warn("guild bots not listed", "guild_id", guildID, "err", err)
			return out
		}
		for _, m := range list {
			if u, err := s.Store.GetUser(ctx, m.UserID); err == nil && u.Bot {
				out = append(out, m.UserID)
			}
		}
		if len(list) < MaxMembersList {
			return out
		}
		after = list[len(list)-1].UserID
	}
}

// MemberUpdated tells the guild's bots that userID's membership changed (GUILD_MEMBER_UPDATE).
func (s *Base) MemberUpdated(ctx context.Context, guildID, userID uint64) {
	s.MemberChanged(ctx, guildID, userID, gwire.EventGuildMemberUpdate)
}

// ChannelViewers returns the guild's bot members that can view the channel.
func (s *Base) ChannelViewers(ctx context.Context, ch *store.GuildChannel) []uint64 {
	g, err := s.Store.GetGuild(ctx, ch.GuildID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.Logger.Warn("channel event not sent", "channel_id", ch.ID, "err", err)
		}
		return nil
	}
	var to []uint64
	for _, id := range s.BotMembers(ctx, ch.GuildID) {
		a, err := LoadAccess(ctx, s.Store, g, id)
		if err != nil {
			continue
		}
		if perms, err := a.Channel(ctx, s.Store, ch); err == nil && perms&PermViewChannel != 0 {
			to = append(to, id)
		}
	}
	return to
}

// UserSeen records that userID was active (a gateway session started or ended) in each of its
// guilds, for prune; failures are logged.
func (s *Base) UserSeen(ctx context.Context, userID uint64) {
	if err := s.Store.TouchUserGuilds(ctx, userID, s.Clock.Now()); err != nil {
		s.Logger.Warn("member activity not recorded", "user_id", userID, "err", err)
	}
}

// GuildEvent delivers a guild event to the guild's bots whose sessions have the GUILDS intent
// (voicestatus.GuildEvents).
func (s *Base) GuildEvent(ctx context.Context, guildID uint64, event string, data any) {
	if s.Bots != nil {
		s.Bots.DispatchBots(s.BotMembers(ctx, guildID), gwire.IntentGuilds, event, data)
	}
}
