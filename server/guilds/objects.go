package guilds

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/wire"
)

// MaxRolesCreate bounds the roles of one Create call.
const MaxRolesCreate = 250

// maxColor is the largest RGB color value.
const maxColor = 0xFFFFFF

// createRoles makes the guild's @everyone role (id = guild id) and spec's roles, and stores its
// features; it returns the made roles in spec order.
func createRoles(ctx context.Context, st store.Store, ids *snowflake.Generator, g *store.Guild, spec wire.GuildSpec) ([]store.GuildRole, error) {
	if len(spec.Roles) > MaxRolesCreate {
		return nil, wire.InvalidAt("roles", "BASE_TYPE_MAX_LENGTH", "Must be 250 or fewer in length.")
	}
	everyone := store.GuildRole{ID: g.ID, GuildID: g.ID, Name: "@everyone", Permissions: DefaultEveryone}
	if spec.Everyone != nil {
		everyone.Permissions = uint64(*spec.Everyone)
	}
	if err := st.PutGuildRole(ctx, &everyone); err != nil {
		return nil, err
	}
	features := slices.Clone(spec.Features)
	for i, f := range features {
		if f != wire.FeatureEnhancedRoleColors {
			return nil, wire.InvalidAt("features."+strconv.Itoa(i), "BASE_TYPE_CHOICES", "Value must be one of {ENHANCED_ROLE_COLORS}.")
		}
	}
	if err := st.SetGuildFeatures(ctx, g.ID, features); err != nil {
		return nil, err
	}
	out := make([]store.GuildRole, 0, len(spec.Roles))
	for i, r := range spec.Roles {
		at := "roles." + strconv.Itoa(i)
		if err := checkName(at+".name", r.Name); err != nil {
			return nil, err
		}
		for _, c := range []struct {
			field string
			v     *int
		}{{"color", &r.Color}, {"secondary_color", r.SecondaryColor}, {"tertiary_color", r.TertiaryColor}} {
			if c.v != nil && (*c.v < 0 || *c.v > maxColor) {
				return nil, wire.InvalidAt(at+"."+c.field, "NUMBER_TYPE_MAX", "Must be between 0 and 16777215.")
			}
		}
		if (r.SecondaryColor != nil || r.TertiaryColor != nil) && !slices.Contains(features, wire.FeatureEnhancedRoleColors) {
			return nil, wire.InvalidAt(at+".secondary_color", "GUILD_FEATURE_REQUIRED", "The guild needs ENHANCED_ROLE_COLORS for gradient colors.")
		}
		role := store.GuildRole{ID: ids.Next(), GuildID: g.ID, Name: r.Name, Color: r.Color, SecondaryColor: r.SecondaryColor,
			TertiaryColor: r.TertiaryColor, Permissions: uint64(r.Permissions), Position: i + 1, Hoist: r.Hoist}
		if err := st.PutGuildRole(ctx, &role); err != nil {
			return nil, err
		}
		out = append(out, role)
	}
	return out, nil
}

// setSpecRoles gives a member the roles of a Create call named by index.
func setSpecRoles(ctx context.Context, st store.Store, guildID, userID uint64, roles []store.GuildRole, idx []int, at string) error {
	if len(idx) == 0 {
		return nil
	}
	list := make([]uint64, 0, len(idx))
	for j, i := range idx {
		if i < 0 || i >= len(roles) {
			return wire.InvalidAt(at+".roles."+strconv.Itoa(j), "ROLE_UNKNOWN", "Not a role of this request.")
		}
		list = append(list, roles[i].ID)
	}
	return st.SetMemberRoles(ctx, guildID, userID, list)
}

// createOverwrites stores a channel's overwrites of a Create call.
func createOverwrites(ctx context.Context, st store.Store, guildID, channelID uint64, roles []store.GuildRole, specs []wire.OverwriteSpec, at string) error {
	for j, o := range specs {
		at := at + ".overwrites." + strconv.Itoa(j)
		ow := store.ChannelOverwrite{ChannelID: channelID, Allow: uint64(o.Allow), Deny: uint64(o.Deny)}
		switch {
		case o.Everyone && o.Role == nil && o.User == nil:
			ow.TargetID, ow.Type = guildID, store.OverwriteRole
		case !o.Everyone && o.Role != nil && o.User == nil:
			if *o.Role < 0 || *o.Role >= len(roles) {
				return wire.InvalidAt(at+".role", "ROLE_UNKNOWN", "Not a role of this request.")
			}
			ow.TargetID, ow.Type = roles[*o.Role].ID, store.OverwriteRole
		case !o.Everyone && o.Role == nil && o.User != nil:
			if _, err := st.GetGuildMember(ctx, guildID, uint64(*o.User)); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return wire.InvalidAt(at+".user", "USER_UNKNOWN", "Not a member of the guild.")
				}
				return err
			}
			ow.TargetID, ow.Type = uint64(*o.User), store.OverwriteMember
		default:
			return wire.InvalidAt(at, "OVERWRITE_TARGET", "Give one of everyone, role or user.")
		}
		if err := st.PutChannelOverwrite(ctx, &ow); err != nil {
			return err
		}
	}
	return nil
}

// RoleObject is the wire form of a role (rule ROLE-1: color is the primary color, colors the
// gradient).
func RoleObject(r *store.GuildRole) wire.Role {
	return wire.Role{ID: wire.Snowflake(r.ID), Name: r.Name, Color: r.Color,
		Colors:   wire.RoleColors{PrimaryColor: r.Color, SecondaryColor: r.SecondaryColor, TertiaryColor: r.TertiaryColor},
		Position: r.Position, Permissions: wire.Permissions(r.Permissions), Hoist: r.Hoist, Mentionable: r.Mentionable}
}

// Timestamp is the platform's timestamp form.
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// MemberObject is the wire form of a member with the given role ids; withUser adds the user.
func MemberObject(ctx context.Context, st store.Store, m *store.GuildMember, roles []uint64, withUser bool) (wire.Member, error) {
	out := wire.Member{Nick: optString(m.Nick), Avatar: optString(m.Avatar), Banner: optString(m.Banner), Bio: m.Bio,
		Roles: make([]wire.Snowflake, 0, len(roles)), JoinedAt: Timestamp(m.JoinedAt)}
	for _, id := range roles {
		out.Roles = append(out.Roles, wire.Snowflake(id))
	}
	if withUser {
		u, err := st.GetUser(ctx, m.UserID)
		if err != nil {
			return wire.Member{}, err
		}
		obj := users.Object(u, false)
		out.User = &obj
	}
	return out, nil
}

// LoadMember returns the wire form of userID's membership, with its user; 404 10007 for a
// non-member.
func LoadMember(ctx context.Context, st store.Store, guildID, userID uint64, withUser bool) (wire.Member, error) {
	m, err := st.GetGuildMember(ctx, guildID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return wire.Member{}, wire.UnknownMember()
	}
	if err != nil {
		return wire.Member{}, err
	}
	roles, err := st.ListMemberRoles(ctx, guildID, userID)
	if err != nil {
		return wire.Member{}, err
	}
	return MemberObject(ctx, st, m, roles, withUser)
}

// FullChannel is the platform's channel object of c with its overwrites (rule PERM-1: allow and
// deny as strings).
func FullChannel(ctx context.Context, st store.Store, c *store.GuildChannel) (wire.Channel, error) {
	ows, err := st.ListChannelOverwrites(ctx, c.ID)
	if err != nil {
		return wire.Channel{}, err
	}
	gid := wire.Snowflake(c.GuildID)
	out := wire.Channel{ID: wire.Snowflake(c.ID), Type: c.Type, GuildID: &gid, Name: c.Name, Position: c.Position,
		PermissionOverwrites: make([]wire.Overwrite, 0, len(ows))}
	if c.ParentID != 0 {
		p := wire.Snowflake(c.ParentID)
		out.ParentID = &p
	}
	cs, err := st.GetChannelSettings(ctx, c.ID)
	if err != nil {
		return wire.Channel{}, err
	}
	out.RateLimitPerUser, out.Topic = cs.RateLimitPerUser, optString(cs.Topic)
	for _, o := range ows {
		out.PermissionOverwrites = append(out.PermissionOverwrites, wire.Overwrite{ID: wire.Snowflake(o.TargetID), Type: o.Type,
			Allow: wire.Permissions(o.Allow), Deny: wire.Permissions(o.Deny)})
	}
	return out, nil
}

// GuildObject is the wire form of a guild with its roles and features.
func GuildObject(ctx context.Context, st store.Store, g *store.Guild) (wire.Guild, error) {
	roles, err := st.ListGuildRoles(ctx, g.ID)
	if err != nil {
		return wire.Guild{}, err
	}
	features, err := st.GetGuildFeatures(ctx, g.ID)
	if err != nil {
		return wire.Guild{}, err
	}
	out := wire.Guild{ID: wire.Snowflake(g.ID), Name: g.Name, OwnerID: wire.Snowflake(g.OwnerID), Roles: make([]wire.Role, 0, len(roles)),
		Emojis: []struct{}{}, Stickers: []struct{}{}, Features: features, PreferredLocale: "en-US"}
	if !hasRoleID(roles, g.ID) { // a guild made before roles: its implicit @everyone
		out.Roles = append(out.Roles, wire.Role{ID: wire.Snowflake(g.ID), Name: "@everyone", Permissions: wire.Permissions(DefaultEveryone)})
	}
	for i := range roles {
		out.Roles = append(out.Roles, RoleObject(&roles[i]))
	}
	return out, nil
}

func hasRoleID(roles []store.GuildRole, id uint64) bool {
	for _, r := range roles {
		if r.ID == id {
			return true
		}
	}
	return false
}

// LargeThreshold is the member count above which GUILD_CREATE lists only the bot's own member.
const LargeThreshold = 250

// GuildCreate is the d of GUILD_CREATE for userID (a bot): the guild, its channels (with
// GUILDS), and its members (all of them with GUILD_MEMBERS in a guild of at most LargeThreshold
// members, else the bot's own member).
//
// With obfuscate (rule GW-1), the channels userID cannot view come obfuscated (rule CH-3).
func GuildCreate(ctx context.Context, st store.Store, g *store.Guild, userID uint64, allMembers, obfuscate bool) (wire.GuildCreate, error) {
	obj, err := GuildObject(ctx, st, g)
	if err != nil {
		return wire.GuildCreate{}, err
	}
	out := wire.GuildCreate{Guild: obj, Threads: []struct{}{}, Presences: []struct{}{}, VoiceStates: []wire.VoiceState{}}
	if out.MemberCount, err = st.CountGuildMembers(ctx, g.ID); err != nil {
		return wire.GuildCreate{}, err
	}
	out.Large = out.MemberCount > LargeThreshold
	self, err := st.GetGuildMember(ctx, g.ID, userID)
	if err != nil {
		return wire.GuildCreate{}, err
	}
	out.JoinedAt = Timestamp(self.JoinedAt)
	list := []store.GuildMember{*self}
	if allMembers && !out.Large {
		if list, err = st.ListGuildMembers(ctx, g.ID, 0, LargeThreshold); err != nil {
			return wire.GuildCreate{}, err
		}
	}
	for i := range list {
		roles, err := st.ListMemberRoles(ctx, g.ID, list[i].UserID)
		if err != nil {
			return wire.GuildCreate{}, err
		}
		m, err := MemberObject(ctx, st, &list[i], roles, true)
		if err != nil {
			return wire.GuildCreate{}, err
		}
		out.Members = append(out.Members, m)
	}
	chans, err := st.ListGuildChannels(ctx, g.ID)
	if err != nil {
		return wire.GuildCreate{}, err
	}
	out.Channels = make([]wire.Channel, 0, len(chans))
	for i := range chans {
		c, err := FullChannel(ctx, st, &chans[i])
		if err != nil {
			return wire.GuildCreate{}, err
		}
		c.GuildID = nil // implied by the guild, as on the platform
		if obfuscate {
			if c, err = obfuscated(ctx, st, g, &chans[i], userID, c); err != nil {
				return wire.GuildCreate{}, err
			}
		}
		out.Channels = append(out.Channels, c)
	}
	return out, nil
}

// obfuscated is c as userID sees it with channel obfuscation on (ChannelFor).
func obfuscated(ctx context.Context, st store.Store, g *store.Guild, ch *store.GuildChannel, userID uint64, c wire.Channel) (wire.Channel, error) {
	raw, err := ChannelFor(ctx, st, g, ch, userID, true, c)
	if err != nil {
		return c, err
	}
	var out wire.Channel
	return out, json.Unmarshal(raw, &out)
}
