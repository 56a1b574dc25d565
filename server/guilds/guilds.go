package guilds

import (
	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/invites"
	"sdkpp/wire"
)

// Limits of the guild routes (the platform's).
const (
	MaxChannelsCreate = 50 // channels of one Create call
	MaxNickChars      = 32 // PATCH /guilds/{id}/members/@me
	MaxBioChars       = 190
)

// Service serves the guild routes. Set its fields before Register.
type Service struct {
	*guildaccess.Base
	// OnMemberLeft, when set, is told that a member left a guild (after the GUILD_MEMBER_REMOVE).
	OnMemberLeft func(guildID, userID uint64)
	// VoiceStates gives a guild's voice states for its GUILD_CREATE to a bot session (BotGuilds);
	// nil gives none.
	VoiceStates func(guildID uint64) []wire.VoiceState
	// Invites accepts invites for package oauth's invite page (see LookupInvite).
	Invites *invites.Service
}

// Register adds the routes to mux (paths relative to the API base). Begin Guild Prune is served
// through guildaccess.Base.Actions (see Actions).
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("GET /users/@me/guilds", s.Route(s.userGuilds))
	mux.HandleFunc("GET /guilds/{guild_id}", s.Route(s.getGuild))
	mux.HandleFunc("GET /guilds/{guild_id}/roles", s.Route(s.roles))
	mux.HandleFunc("GET /guilds/{guild_id}/roles/member-counts", s.Route(s.roleMemberCounts))
	mux.HandleFunc("GET /guilds/{guild_id}/members", s.Route(s.members))
	mux.HandleFunc("GET /guilds/{guild_id}/members/{user_id}", s.Route(s.member))
	mux.HandleFunc("PATCH /guilds/{guild_id}/members/@me", s.Route(s.modifyMe))
	mux.HandleFunc("DELETE /users/@me/guilds/{guild_id}", s.Route(s.leave))
	mux.HandleFunc("GET /guilds/{guild_id}/prune", s.Route(s.pruneCount))
	s.registerRemoved(mux)
}

// Actions are the routes POST /guilds/{guild_id}/{action} of this package: Begin Guild Prune.
func (s *Service) Actions() guildaccess.Routes {
	return guildaccess.Routes{"prune": s.beginPrune}
}

// userGuilds serves GET /users/@me/guilds to a user or a bot; a bot may give ?shard= (rule
// GLD-1, see shardOf).
func (s *Service) userGuilds(q *guildaccess.Caller) (any, error) {
	list, err := s.Store.ListUserGuilds(q.Ctx, q.UserID)
	if err != nil {
		return nil, err
	}
	if list, err = s.shardOf(q, list); err != nil {
		return nil, err
	}
	out := make([]wire.PartialGuild, 0, len(list))
	for i := range list {
		perms, _, err := guildaccess.Permissions(q.Ctx, s.Store, &list[i], q.UserID)
		if err != nil {
			return nil, err
		}
		out = append(out, guildaccess.PartialGuild(&list[i], perms, q.UserID))
	}
	return out, nil
}
