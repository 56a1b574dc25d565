package guilds

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// PrunePermission is what prune needs in g: MANAGE_GUILD and KICK_MEMBERS, and ADMINISTRATOR
// when the guild has PRUNE_REQUIRES_ADMIN (rule GLD-2).
func PrunePermission(features []string) uint64 {
	p := wire.PermManageGuild | wire.PermKickMembers
	if slices.Contains(features, wire.FeaturePruneRequiresAdmin) {
		p |= guildaccess.PermAdministrator
	}
	return p
}

// pruneGuild loads the path's guild for a prune: 403 50013 without PrunePermission.
func (s *Service) pruneGuild(q *guildaccess.Caller) (*guildaccess.Access, error) {
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	features, err := s.Store.GetGuildFeatures(q.Ctx, a.Guild.ID)
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
		list, err := s.Store.ListGuildMembers(ctx, g.ID, after, guildaccess.MaxMembersList)
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
		if len(list) < guildaccess.MaxMembersList {
			return out, nil
		}
		after = list[len(list)-1].UserID
	}
}

// pruneCount serves GET /guilds/{guild_id}/prune?days=&include_roles= (rule GLD-2): how many
// members a prune would remove; days 1 to 30 (default 7), include_roles a comma-separated list
// of role ids whose members may be pruned too.
func (s *Service) pruneCount(q *guildaccess.Caller) (any, error) {
	v := q.URL.Query()
	days, err := httpx.QueryInt(v, "days", wire.DefaultPruneDays, math.MinInt, math.MaxInt)
	if err != nil {
		return nil, err
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
	ids, err := s.prunable(q.Ctx, a.Guild, days, roles)
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
func (s *Service) beginPrune(q *guildaccess.Caller) (any, error) {
	var body wire.BeginPrune
	if err := httpx.DecodeJSON(q.Request, &body); err != nil {
		return nil, err
	}
	days, err := httpx.IntField("days", body.Days, wire.DefaultPruneDays, 1<<30)
	if err != nil {
		return nil, err
	}
	if err := pruneDays(days); err != nil {
		return nil, err
	}
	compute := true
	if len(body.ComputePruneCount) > 0 && string(body.ComputePruneCount) != "null" {
		if compute, err = httpx.BoolField("compute_prune_count", body.ComputePruneCount); err != nil {
			return nil, err
		}
	}
	roles, err := httpx.IDsField("include_roles", body.IncludeRoles, 1000)
	if err != nil {
		return nil, err
	}
	a, err := s.pruneGuild(q)
	if err != nil {
		return nil, err
	}
	ids, err := s.prunable(q.Ctx, a.Guild, days, roles)
	if err != nil {
		return nil, err
	}
	bots := s.BotMembers(q.Ctx, a.Guild.ID)
	n := 0
	for _, id := range ids {
		u, err := s.Store.GetUser(q.Ctx, id)
		if err != nil {
			continue
		}
		if err := s.Store.DeleteGuildMember(q.Ctx, a.Guild.ID, id); err != nil {
			continue // gone meanwhile
		}
		n++
		if s.Bots != nil {
			s.Bots.DispatchBots(bots, gwire.IntentGuildMembers, gwire.EventGuildMemberRemove,
				wire.MemberRemove{GuildID: wire.Snowflake(a.Guild.ID), User: guildaccess.UserObject(u)})
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
