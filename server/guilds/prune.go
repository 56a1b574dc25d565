package guilds

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Prune (rule GLD-2). A member is prunable when it has no role but those of include_roles, is
// neither the owner nor a bot, and has not been seen for days days. "Seen" is what the service
// knows: the member's last message in the guild, the start or end of one of the user's gateway
// sessions (any application), and its join time as the floor (store.GuildActivityStore).

// registerPrune adds Get Guild Prune Count (GET /guilds/{guild_id}/prune); Begin Guild Prune
// (POST) is served through guildPost.
func (s *Service) registerPrune(mux httpx.Router) {
	mux.HandleFunc("GET /guilds/{guild_id}/prune", s.callerRoute(s.pruneCount))
}

// UserSeen records that userID was active (a gateway session started or ended) in each of its
// guilds, for prune; failures are logged.
func (s *Service) UserSeen(ctx context.Context, userID uint64) {
	if err := s.Store.TouchUserGuilds(ctx, userID, s.Clock.Now()); err != nil {
		s.Logger.Warn("member activity not recorded", "user_id", userID, "err", err)
	}
}

// memberSeen records that the caller was active in guildID (it sent a message there).
func (s *Service) memberSeen(q *caller, guildID uint64) {
	if err := s.Store.TouchGuildMember(q.ctx, guildID, q.userID, s.Clock.Now()); err != nil {
		s.Logger.Warn("member activity not recorded", "guild_id", guildID, "user_id", q.userID, "err", err)
	}
}

// PrunePermission is what prune needs in g: MANAGE_GUILD and KICK_MEMBERS, and ADMINISTRATOR
// when the guild has PRUNE_REQUIRES_ADMIN (rule GLD-2).
func PrunePermission(features []string) uint64 {
	p := wire.PermManageGuild | wire.PermKickMembers
	if slices.Contains(features, wire.FeaturePruneRequiresAdmin) {
		p |= PermAdministrator
	}
	return p
}

// pruneGuild loads the path's guild for a prune: 403 50013 without PrunePermission.
func (s *Service) pruneGuild(q *caller) (*Access, error) {
	a, err := s.memberGuild(q)
	if err != nil {
		return nil, err
	}
	features, err := s.Store.GetGuildFeatures(q.ctx, a.Guild.ID)
	if err != nil {
		return nil, err
	}
	need := PrunePermission(features)
	if a.Base()&need != need {
		return nil, wire.MissingPermissions()
	}
	return a, nil
}

// pruneDays checks days: 1 to 30.
func pruneDays(n int) error {
	if n < 1 || n > wire.MaxPruneDays {
		return wire.InvalidAt("days", "NUMBER_TYPE_MAX", "Must be between 1 and 30.")
	}
	return nil
}

// prunable returns the ids of the guild's members a prune of days days with includeRoles would
// remove, as of now.
func (s *Service) prunable(ctx context.Context, g *store.Guild, days int, includeRoles []uint64) ([]uint64, error) {
	seen, err := s.Store.GuildMembersLastSeen(ctx, g.ID)
	if err != nil {
		return nil, err
	}
	cutoff := s.Clock.Now().Add(-time.Duration(days) * 24 * time.Hour)
	var out []uint64
	for after := uint64(0); ; {
		list, err := s.Store.ListGuildMembers(ctx, g.ID, after, MaxMembersList)
		if err != nil {
			return nil, err
		}
		for _, m := range list {
			last := m.JoinedAt
			if at, ok := seen[m.UserID]; ok && at.After(last) {
				last = at
			}
			if m.UserID == g.OwnerID || last.After(cutoff) {
				continue
			}
			roles, err := s.Store.ListMemberRoles(ctx, g.ID, m.UserID)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(roles, func(r uint64) bool { return r != g.ID && !slices.Contains(includeRoles, r) }) {
				continue
			}
			u, err := s.Store.GetUser(ctx, m.UserID)
			if err != nil || u.Bot {
				continue // an unknown user is left alone
			}
			out = append(out, m.UserID)
		}
		if len(list) < MaxMembersList {
			return out, nil
		}
		after = list[len(list)-1].UserID
	}
}

// pruneCount serves GET /guilds/{guild_id}/prune?days=&include_roles= (rule GLD-2): how many
// members a prune would remove; days 1 to 30 (default 7), include_roles a comma-separated list
// of role ids whose members may be pruned too.
func (s *Service) pruneCount(q *caller) (any, error) {
	v := q.URL.Query()
	days := wire.DefaultPruneDays
	if v.Has("days") {
		n, err := strconv.Atoi(v.Get("days"))
		if err != nil {
			return nil, wire.InvalidAt("days", "NUMBER_TYPE_COERCE", "The value is not int.")
		}
		days = n
	}
	if err := pruneDays(days); err != nil {
		return nil, err
	}
	var roles []uint64
	if raw := v.Get("include_roles"); raw != "" {
		for i, p := range strings.Split(raw, ",") {
			id, ok := wire.ParseSnowflake(p)
			if !ok {
				return nil, wire.InvalidAt("include_roles."+strconv.Itoa(i), "NUMBER_TYPE_COERCE", "The value is not snowflake.")
			}
			roles = append(roles, uint64(id))
		}
	}
	a, err := s.pruneGuild(q)
	if err != nil {
		return nil, err
	}
	ids, err := s.prunable(q.ctx, a.Guild, days, roles)
	if err != nil {
		return nil, err
	}
	n := len(ids)
	return wire.PruneCount{Pruned: &n}, nil
}

// beginPrune serves POST /guilds/{guild_id}/prune {days, compute_prune_count, include_roles}
// (rule GLD-2): removes the prunable members, each with a GUILD_MEMBER_REMOVE to the guild's
// bots as when a member leaves; pruned is their number, or null when compute_prune_count is
// false (default true).
func (s *Service) beginPrune(q *caller) (any, error) {
	var body wire.BeginPrune
	if err := httpx.DecodeJSON(q.Request, &body); err != nil {
		return nil, err
	}
	days, err := intField("days", body.Days, wire.DefaultPruneDays, 1<<30)
	if err != nil {
		return nil, err
	}
	if err := pruneDays(days); err != nil {
		return nil, err
	}
	compute := true
	if len(body.ComputePruneCount) > 0 && string(body.ComputePruneCount) != "null" {
		if compute, err = boolField("compute_prune_count", body.ComputePruneCount); err != nil {
			return nil, err
		}
	}
	roles, err := idsField("include_roles", body.IncludeRoles, 1000)
	if err != nil {
		return nil, err
	}
	a, err := s.pruneGuild(q)
	if err != nil {
		return nil, err
	}
	ids, err := s.prunable(q.ctx, a.Guild, days, roles)
	if err != nil {
		return nil, err
	}
	bots := s.botMembers(q.ctx, a.Guild.ID)
	n := 0
	for _, id := range ids {
		u, err := s.Store.GetUser(q.ctx, id)
		if err != nil {
			continue
		}
		if err := s.Store.DeleteGuildMember(q.ctx, a.Guild.ID, id); err != nil {
			continue // gone meanwhile
		}
		n++
		if s.Bots != nil {
			s.Bots.DispatchBots(bots, gwire.IntentGuildMembers, gwire.EventGuildMemberRemove,
				wire.MemberRemove{GuildID: wire.Snowflake(a.Guild.ID), User: userObject(u)})
		}
		if s.OnMemberLeft != nil {
			s.OnMemberLeft(a.Guild.ID, id)
		}
	}
	if !compute {
		return wire.PruneCount{}, nil
	}
	return wire.PruneCount{Pruned: &n}, nil
}
