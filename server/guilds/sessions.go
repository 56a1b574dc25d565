package guilds

import (
	"context"
	"errors"
	"strings"

	"sdkpp/server/gateway"
	"sdkpp/server/guildaccess"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// BotGuilds gives a bot session its guilds (of its shard), with their GUILD_CREATE when the
// intents include GUILDS: channels and roles, all members with GUILD_MEMBERS, and the voice
// states (VoiceStates) with GUILD_VOICE_STATES. It is the gateway's Config.Guilds.
func (s *Service) BotGuilds(ctx context.Context, who gateway.Identity, intents uint64, shard []int) ([]gateway.BotGuild, error) {
	list, err := s.Store.ListUserGuilds(ctx, who.UserID)
	if err != nil {
		return nil, err
	}
	app, err := s.Store.GetApplication(ctx, who.AppID)
	if err != nil {
		return nil, err
	}
	obfuscate := guildaccess.ObfuscationOn(who.Capabilities, app) // rule GW-1
	out := make([]gateway.BotGuild, 0, len(list))
	for i := range list {
		g := &list[i]
		if shard != nil && !InShard(g.ID, shard[0], shard[1]) {
			continue
		}
		bg := gateway.BotGuild{ID: g.ID}
		if intents&gwire.IntentGuilds != 0 {
			gc, err := guildaccess.GuildCreate(ctx, s.Store, g, who.UserID, intents&gwire.IntentGuildMembers != 0, obfuscate)
			if err != nil {
				return nil, err
			}
			if intents&gwire.IntentGuildVoiceStates != 0 && s.VoiceStates != nil {
				gc.VoiceStates = s.VoiceStates(g.ID)
			}
			bg.Create = gc
		}
		out = append(out, bg)
	}
	return out, nil
}

// RequestMembers serves the gateway's Request Guild Members (its Config.Members): the members of a guild the bot is in
// whose username or nick starts with query (case-insensitive), up to limit (0: all), or those
// of userIDs.
func (s *Service) RequestMembers(ctx context.Context, who gateway.Identity, guildID uint64, query string, limit int, userIDs []uint64) ([]wire.Member, []uint64, error) {
	if _, err := s.Store.GetGuildMember(ctx, guildID, who.UserID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, wire.UnknownGuild()
		}
		return nil, nil, err
	}
	var out []wire.Member
	var missing []uint64
	if userIDs != nil {
		for _, id := range userIDs {
			m, err := guildaccess.LoadMember(ctx, s.Store, guildID, id, true)
			var apiErr *wire.APIError
			switch {
			case errors.As(err, &apiErr):
				missing = append(missing, id)
			case err != nil:
				return nil, nil, err
			default:
				out = append(out, m)
			}
		}
		return out, missing, nil
	}
	query = strings.ToLower(query)
	after := uint64(0)
	for {
		page, err := s.Store.ListGuildMembers(ctx, guildID, after, guildaccess.MaxMembersList)
		if err != nil {
			return nil, nil, err
		}
		for i := range page {
			m, err := guildaccess.LoadMember(ctx, s.Store, guildID, page[i].UserID, true)
			if err != nil {
				return nil, nil, err
			}
			nick := ""
			if m.Nick != nil {
				nick = *m.Nick
			}
			if query != "" && !strings.HasPrefix(strings.ToLower(m.User.Username), query) && !strings.HasPrefix(strings.ToLower(nick), query) {
				continue
			}
			out = append(out, m)
			if limit > 0 && len(out) == limit {
				return out, nil, nil
			}
		}
		if len(page) < guildaccess.MaxMembersList {
			return out, nil, nil
		}
		after = page[len(page)-1].UserID
	}
}
