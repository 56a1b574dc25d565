package guilds

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"sdkpp/server/guildaccess"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// Create makes a guild owned by spec.OwnerID with its members and channels (dev seeding and
// POST /dev/guilds). Channels may name their category by index in spec (Parent) or by id
// (ParentID); a parent must be a category of the same guild.
func Create(ctx context.Context, st store.Store, ids *snowflake.Generator, now time.Time, spec wire.GuildSpec) (wire.DevGuild, error) {
	if err := guildaccess.CheckName("name", spec.Name); err != nil {
		return wire.DevGuild{}, err
	}
	if len(spec.Channel) > MaxChannelsCreate {
		return wire.DevGuild{}, wire.InvalidAt("channels", "BASE_TYPE_MAX_LENGTH", "Must be 50 or fewer in length.")
	}
	out := wire.DevGuild{Name: spec.Name, OwnerID: spec.OwnerID, Channels: []wire.GuildChannel{}}
	err := st.WithTx(ctx, func(st store.Store) error {
		if err := checkUser(ctx, st, "owner_id", uint64(spec.OwnerID)); err != nil {
			return err
		}
		g := &store.Guild{ID: ids.Next(), Name: spec.Name, OwnerID: uint64(spec.OwnerID), CreatedAt: now}
		out.ID = wire.Snowflake(g.ID)
		if err := st.CreateGuild(ctx, g); err != nil {
			return err
		}
		roles, err := createRoles(ctx, st, ids, g, spec)
		if err != nil {
			return err
		}
		members := append([]wire.GuildMemberSpec{{ID: spec.OwnerID, ManageChannels: true}}, spec.Members...)
		for i, m := range members {
			at := "members." + strconv.Itoa(i-1)
			if i > 0 {
				if err := checkUser(ctx, st, at+".id", uint64(m.ID)); err != nil {
					return err
				}
			}
			if err := st.PutGuildMember(ctx, &store.GuildMember{GuildID: g.ID, UserID: uint64(m.ID), ManageChannels: m.ManageChannels, JoinedAt: now}); err != nil {
				return err
			}
			if err := setSpecRoles(ctx, st, g.ID, uint64(m.ID), roles, m.Roles, at); err != nil {
				return err
			}
		}
		made := make([]*store.GuildChannel, len(spec.Channel))
		for i, c := range spec.Channel {
			ch, err := newChannel(ctx, st, g.ID, c, made[:i], "channels."+strconv.Itoa(i))
			if err != nil {
				return err
			}
			ch.ID, ch.CreatedAt = ids.Next(), now
			if err := st.CreateGuildChannel(ctx, ch); err != nil {
				return err
			}
			if err := createOverwrites(ctx, st, g.ID, ch.ID, roles, c.Overwrites, "channels."+strconv.Itoa(i)); err != nil {
				return err
			}
			made[i] = ch
			out.Channels = append(out.Channels, guildaccess.ChannelObject(ch))
		}
		return nil
	})
	return out, err
}

// creatable are the channel types Create makes.
var creatable = map[int]bool{wire.ChannelGuildText: true, wire.ChannelGuildVoice: true, wire.ChannelGuildCategory: true,
	wire.ChannelGuildNews: true, wire.ChannelGuildStageVoice: true, wire.ChannelGuildForum: true, wire.ChannelGuildMedia: true}

// newChannel validates one channel of Create; before are the channels made earlier in the call.
func newChannel(ctx context.Context, st store.Store, guildID uint64, c wire.GuildChannelSpec, before []*store.GuildChannel, at string) (*store.GuildChannel, error) {
	if err := guildaccess.CheckName(at+".name", c.Name); err != nil {
		return nil, err
	}
	if !creatable[c.Type] {
		return nil, wire.InvalidAt(at+".type", "BASE_TYPE_CHOICES", "Value must be one of {0, 2, 4, 5, 13, 15, 16}.")
	}
	ch := &store.GuildChannel{GuildID: guildID, Name: c.Name, Type: c.Type, Position: c.Position}
	var parent *store.GuildChannel
	switch {
	case c.Parent != nil && c.ParentID != nil:
		return nil, wire.InvalidAt(at+".parent", "CHANNEL_PARENT_INVALID", "Give parent or parent_id, not both.")
	case c.Parent != nil:
		if *c.Parent < 0 || *c.Parent >= len(before) {
			return nil, wire.InvalidAt(at+".parent", "CHANNEL_PARENT_INVALID", "Not an earlier channel of this request.")
		}
		parent = before[*c.Parent]
	case c.ParentID != nil:
		p, err := st.GetGuildChannel(ctx, uint64(*c.ParentID))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if p == nil || p.GuildID != guildID {
			return nil, wire.InvalidAt(at+".parent_id", "CHANNEL_PARENT_INVALID", "Unknown category.")
		}
		parent = p
	}
	if parent != nil {
		if parent.Type != wire.ChannelGuildCategory || c.Type == wire.ChannelGuildCategory {
			return nil, wire.InvalidAt(at+".parent", "CHANNEL_PARENT_INVALID", "The parent must be a category, of a channel that is not one.")
		}
		ch.ParentID = parent.ID
	}
	return ch, nil
}

// checkUser refuses an unknown user or a provisional account as a guild member (a bot user may
// be one).
func checkUser(ctx context.Context, st store.Store, at string, id uint64) error {
	u, err := st.GetUser(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.Provisional) {
		return wire.InvalidAt(at, "USER_UNKNOWN", "Unknown user.")
	}
	return err
}

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
	everyone := store.GuildRole{ID: g.ID, GuildID: g.ID, Name: "@everyone", Permissions: guildaccess.DefaultEveryone}
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
		if err := guildaccess.CheckName(at+".name", r.Name); err != nil {
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
