package guildaccess

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/wire"
)

// Limits of the objects of guilds (the platform's).
const (
	MaxNameChars      = 100      // guild and channel names
	MaxImageDataBytes = 10 << 20 // a decoded image of a data URI: an avatar, a banner, an emoji
)

// imageHash reads an image data URI (data:image/png|jpeg|gif|webp;base64,...) and returns the
// hash it is kept as.
func ImageHash(field, uri string) (string, error) {
	bad := wire.InvalidAt(field, "IMAGE_INVALID", "Invalid image data")
	rest, ok := strings.CutPrefix(uri, "data:image/")
	if !ok {
		return "", bad
	}
	kind, data, ok := strings.Cut(rest, ";base64,")
	switch {
	case !ok:
		return "", bad
	case kind != "png" && kind != "jpeg" && kind != "gif" && kind != "webp":
		return "", bad
	case base64.StdEncoding.DecodedLen(len(data)) > MaxImageDataBytes:
		return "", wire.InvalidAt(field, "BINARY_TYPE_MAX_SIZE", "File cannot be larger than 10240.0 kb.")
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw) == 0 {
		return "", bad
	}
	sum := sha256.Sum256(raw)
	h := hex.EncodeToString(sum[:16])
	if kind == "gif" {
		h = "a_" + h
	}
	return h, nil
}

func UserObject(u *store.User) wire.User {
	out := wire.User{ID: wire.Snowflake(u.ID), Username: u.Username, Discriminator: "0", Bot: u.Bot}
	if u.GlobalName != "" {
		n := u.GlobalName
		out.GlobalName = &n
	}
	return out
}

// textChannel tells whether messages may be sent in a channel of type t.
func TextChannel(t int) bool { return t == wire.ChannelGuildText || t == wire.ChannelGuildNews }

// ChannelObject is the wire form of a channel, without the caller-specific fields.
func ChannelObject(c *store.GuildChannel) wire.GuildChannel {
	out := wire.GuildChannel{ID: wire.Snowflake(c.ID), Type: c.Type, GuildID: wire.Snowflake(c.GuildID), Name: c.Name,
		Position: c.Position, IsViewableAndWriteableByAllMembers: true}
	if c.ParentID != 0 {
		p := wire.Snowflake(c.ParentID)
		out.ParentID = &p
	}
	return out
}

func CheckName(at, name string) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > MaxNameChars || !utf8.ValidString(name) {
		return wire.InvalidAt(at, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
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

func OptString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// MemberObject is the wire form of a member with the given role ids; withUser adds the user.
func MemberObject(ctx context.Context, st store.Store, m *store.GuildMember, roles []uint64, withUser bool) (wire.Member, error) {
	out := MemberFields(m, roles)
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

// MemberFields is the wire form of m with roles, without its user.
func MemberFields(m *store.GuildMember, roles []uint64) wire.Member {
	out := wire.Member{Nick: OptString(m.Nick), Avatar: OptString(m.Avatar), Banner: OptString(m.Banner), Bio: m.Bio,
		Roles: make([]wire.Snowflake, 0, len(roles)), JoinedAt: Timestamp(m.JoinedAt)}
	for _, id := range roles {
		out.Roles = append(out.Roles, wire.Snowflake(id))
	}
	return out
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
	out.RateLimitPerUser, out.Topic = cs.RateLimitPerUser, OptString(cs.Topic)
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
	if !HasRoleID(roles, g.ID) { // a guild made before roles: its implicit @everyone
		out.Roles = append(out.Roles, wire.Role{ID: wire.Snowflake(g.ID), Name: "@everyone", Permissions: wire.Permissions(DefaultEveryone)})
	}
	for i := range roles {
		out.Roles = append(out.Roles, RoleObject(&roles[i]))
	}
	return out, nil
}

func HasRoleID(roles []store.GuildRole, id uint64) bool {
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
	out := wire.GuildCreate{Guild: obj, Threads: []struct{}{}, Presences: []struct{}{}, VoiceStates: []wire.VoiceState{},
		StageInstances: []struct{}{}, SoundboardSounds: []struct{}{}, GuildScheduledEvents: []wire.ScheduledEvent{}}
	events, err := st.ListGuildScheduledEvents(ctx, g.ID)
	if err != nil {
		return wire.GuildCreate{}, err
	}
	for i := range events {
		out.GuildScheduledEvents = append(out.GuildScheduledEvents, ScheduledEventObject(&events[i]))
	}
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

// PartialGuild is the partial guild of GET /users/@me/guilds and of invites: perms are the
// caller's permission bits in it, string-serialized as the platform does.
func PartialGuild(g *store.Guild, perms uint64, userID uint64) wire.PartialGuild {
	return wire.PartialGuild{ID: wire.Snowflake(g.ID), Name: g.Name, Owner: g.OwnerID == userID,
		Permissions: strconv.FormatUint(perms, 10), Features: []string{}}
}

// ScheduledEventObject is the wire form of e.
func ScheduledEventObject(e *store.GuildScheduledEvent) wire.ScheduledEvent {
	out := wire.ScheduledEvent{ID: wire.Snowflake(e.ID), GuildID: wire.Snowflake(e.GuildID), CreatorID: wire.Snowflake(e.CreatorID),
		Name: e.Name, Description: OptString(e.Description), ScheduledStartTime: Timestamp(e.StartAt), PrivacyLevel: e.PrivacyLevel,
		Status: e.Status, EntityType: e.EntityType}
	if e.ChannelID != 0 {
		c := wire.Snowflake(e.ChannelID)
		out.ChannelID = &c
	}
	if !e.EndAt.IsZero() {
		end := Timestamp(e.EndAt)
		out.ScheduledEndTime = &end
	}
	if e.EntityType == wire.EventEntityExternal {
		out.EntityMetadata = &wire.EventMetadata{Location: e.Location}
	}
	return out
}
