package guilds

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"unicode/utf8"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// getGuild serves GET /guilds/{guild_id}[?with_counts=true].
func (s *Service) getGuild(q *guildaccess.Caller) (any, error) {
	withCounts := false
	if v := q.URL.Query(); v.Has("with_counts") {
		b, err := strconv.ParseBool(v.Get("with_counts"))
		if err != nil {
			return nil, wire.InvalidAt("with_counts", "BOOLEAN_TYPE_COERCE", "Must be either true or false.")
		}
		withCounts = b
	}
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	out, err := guildaccess.GuildObject(q.Ctx, s.Store, a.Guild)
	if err != nil {
		return nil, err
	}
	if withCounts {
		n, err := s.Store.CountGuildMembers(q.Ctx, a.Guild.ID)
		if err != nil {
			return nil, err
		}
		out.ApproximateMemberCount = &n
	}
	return out, nil
}

// roleMemberCounts serves GET /guilds/{guild_id}/roles/member-counts (rule GLD-4): a map of each
// role's id to how many members have it, 0 for a role nobody has; @everyone is left out.
func (s *Service) roleMemberCounts(q *guildaccess.Caller) (any, error) {
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	counts, err := s.Store.CountRoleMembers(q.Ctx, a.Guild.ID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(a.Roles))
	for _, r := range a.Roles {
		if r.ID != a.Guild.ID {
			out[strconv.FormatUint(r.ID, 10)] = counts[r.ID]
		}
	}
	return out, nil
}

// roles serves GET /guilds/{guild_id}/roles (rule ROLE-1).
func (s *Service) roles(q *guildaccess.Caller) (any, error) {
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	g, err := guildaccess.GuildObject(q.Ctx, s.Store, a.Guild)
	return g.Roles, err
}

// members serves GET /guilds/{guild_id}/members?limit=&after=: members by user id.
func (s *Service) members(q *guildaccess.Caller) (any, error) {
	limit, err := httpx.QueryLimit(q.URL.Query(), 1, guildaccess.MaxMembersList)
	if err != nil {
		return nil, err
	}
	after, err := httpx.QueryID(q.URL.Query(), "after")
	if err != nil {
		return nil, err
	}
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	list, err := s.Store.ListGuildMembers(q.Ctx, a.Guild.ID, after, limit)
	if err != nil {
		return nil, err
	}
	return s.memberObjects(q.Ctx, a.Guild.ID, list)
}

func (s *Service) memberObjects(ctx context.Context, guildID uint64, list []store.GuildMember) ([]wire.Member, error) {
	out := make([]wire.Member, 0, len(list))
	for i := range list {
		roles, err := s.Store.ListMemberRoles(ctx, guildID, list[i].UserID)
		if err != nil {
			return nil, err
		}
		m, err := guildaccess.MemberObject(ctx, s.Store, &list[i], roles, true)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// member serves GET /guilds/{guild_id}/members/{user_id}.
func (s *Service) member(q *guildaccess.Caller) (any, error) {
	userID, err := httpx.PathID(q.Request, "user_id")
	if err != nil {
		return nil, err
	}
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	return guildaccess.LoadMember(q.Ctx, s.Store, a.Guild.ID, userID, true)
}

// modifyMe serves PATCH /guilds/{guild_id}/members/@me (rule MEM-1): a bot sets its nick,
// avatar, banner and bio in the guild; null clears one. The guild's bots get
// GUILD_MEMBER_UPDATE (GW-6).
func (s *Service) modifyMe(q *guildaccess.Caller) (any, error) {
	if !q.Bot {
		return nil, wire.MissingAccess()
	}
	var body wire.ModifyCurrentMember
	if err := httpx.DecodeJSON(q.Request, &body); err != nil {
		return nil, err
	}
	type change struct {
		field string
		raw   json.RawMessage
		apply func(m *store.GuildMember, v string) error
	}
	changes := []change{
		{"nick", body.Nick, func(m *store.GuildMember, v string) error {
			if n := utf8.RuneCountInString(v); n > MaxNickChars || !utf8.ValidString(v) {
				return wire.InvalidAt("nick", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 32 in length.")
			}
			m.Nick = v
			return nil
		}},
		{"avatar", body.Avatar, func(m *store.GuildMember, v string) (err error) {
			if v != "" {
				v, err = guildaccess.ImageHash("avatar", v)
			}
			m.Avatar = v
			return err
		}},
		{"banner", body.Banner, func(m *store.GuildMember, v string) (err error) {
			if v != "" {
				v, err = guildaccess.ImageHash("banner", v)
			}
			m.Banner = v
			return err
		}},
		{"bio", body.Bio, func(m *store.GuildMember, v string) error {
			if utf8.RuneCountInString(v) > MaxBioChars || !utf8.ValidString(v) {
				return wire.InvalidAt("bio", "BASE_TYPE_MAX_LENGTH", "Must be 190 or fewer in length.")
			}
			m.Bio = v
			return nil
		}},
	}
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	m := *a.Member
	for _, c := range changes {
		v, set, err := httpx.OptionalString(c.field, c.raw)
		if err != nil {
			return nil, err
		}
		if !set {
			continue
		}
		if c.field == "nick" && a.Base()&guildaccess.PermChangeNickname == 0 {
			return nil, wire.MissingPermissions()
		}
		if err := c.apply(&m, v); err != nil {
			return nil, err
		}
	}
	if err := s.Store.PutGuildMember(q.Ctx, &m); err != nil {
		return nil, err
	}
	out, err := guildaccess.LoadMember(q.Ctx, s.Store, a.Guild.ID, q.UserID, true)
	if err != nil {
		return nil, err
	}
	event := out
	gid := wire.Snowflake(a.Guild.ID)
	event.GuildID = &gid
	s.MemberEvent(q.Ctx, a.Guild.ID, gwire.EventGuildMemberUpdate, event)
	return out, nil
}

// leave serves DELETE /users/@me/guilds/{guild_id}: the caller leaves the guild (the owner
// cannot: 400 50055); the guild's bots get GUILD_MEMBER_REMOVE (GW-6).
func (s *Service) leave(q *guildaccess.Caller) (any, error) {
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	if a.Guild.OwnerID == q.UserID {
		return nil, &wire.APIError{Status: http.StatusBadRequest, Code: 50055, Message: "Invalid Guild"}
	}
	return nil, s.removeMember(q.Ctx, a.Guild.ID, q.UserID)
}

// removeMember removes userID from the guild: the guild's bots (and the user's bot sessions)
// get GUILD_MEMBER_REMOVE, and OnMemberLeft is told.
func (s *Service) removeMember(ctx context.Context, guildID, userID uint64) error {
	u, err := s.Store.GetUser(ctx, userID)
	if err != nil {
		return err
	}
	if err := s.Store.DeleteGuildMember(ctx, guildID, userID); err != nil {
		return err
	}
	bots := s.BotMembers(ctx, guildID)
	if s.Bots != nil {
		s.Bots.DispatchBots(append(bots, userID), gwire.IntentGuildMembers, gwire.EventGuildMemberRemove,
			wire.MemberRemove{GuildID: wire.Snowflake(guildID), User: guildaccess.UserObject(u)})
	}
	if s.OnMemberLeft != nil {
		s.OnMemberLeft(guildID, userID)
	}
	return nil
}

// RemoveTemporary removes userID, who has just disconnected (no live gateway session left),
// from each guild it joined through a temporary invite and where it has been given no role, as
// the platform does.
func (s *Service) RemoveTemporary(ctx context.Context, userID uint64) error {
	guilds, err := s.Store.ListUserGuilds(ctx, userID)
	if err != nil {
		return err
	}
	for _, g := range guilds {
		m, err := s.Store.GetGuildMember(ctx, g.ID, userID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if !m.Temporary || g.OwnerID == userID {
			continue
		}
		roles, err := s.Store.ListMemberRoles(ctx, g.ID, userID)
		if err != nil {
			return err
		}
		if len(roles) > 0 {
			continue
		}
		if err := s.removeMember(ctx, g.ID, userID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}
