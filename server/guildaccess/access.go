package guildaccess

import (
	"context"
	"errors"

	"sdkpp/server/store"
)

// Permission bits of the partial guild (the platform's values).
const (
	PermManageChannels uint64 = 1 << 4
	PermViewChannel    uint64 = 1 << 10
	PermSendMessages   uint64 = 1 << 11
	permAll            uint64 = 1<<53 - 1
)

// Permissions returns the user's guild-wide permission bits (Access.Base); ok is false for a
// non-member.
func Permissions(ctx context.Context, st store.Store, g *store.Guild, userID uint64) (perms uint64, ok bool, err error) {
	a, err := LoadAccess(ctx, st, g, userID)
	if err != nil {
		return 0, false, err
	}
	if a.Member == nil {
		if g.OwnerID == userID {
			return permAll, true, nil
		}
		return 0, false, nil
	}
	return a.Base(), true, nil
}

// More permission bits (the platform's values).
const (
	PermAdministrator      uint64 = 1 << 3
	PermManageMessages     uint64 = 1 << 13
	PermReadMessageHistory uint64 = 1 << 16
	PermConnect            uint64 = 1 << 20
	PermSpeak              uint64 = 1 << 21
	PermChangeNickname     uint64 = 1 << 26
)

// DefaultEveryone are the permissions of a guild's @everyone role when the guild stores none,
// and of the @everyone role a new guild gets: as on the platform, members may join voice
// channels (CONNECT, SPEAK).
const DefaultEveryone = PermViewChannel | PermSendMessages | PermReadMessageHistory | PermConnect | PermSpeak |
	PermChangeNickname

// Access is what decides a user's permissions in a guild: the guild, its roles and the user's
// membership. Member is nil for a user who is not a member.
type Access struct {
	Guild       *store.Guild
	Roles       []store.GuildRole
	Member      *store.GuildMember
	MemberRoles []uint64
}

// LoadAccess reads the guild's roles and userID's membership; the guild must exist.
func LoadAccess(ctx context.Context, st store.Store, g *store.Guild, userID uint64) (*Access, error) {
	a := &Access{Guild: g}
	var err error
	if a.Roles, err = st.ListGuildRoles(ctx, g.ID); err != nil {
		return nil, err
	}
	a.Member, err = st.GetGuildMember(ctx, g.ID, userID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return a, nil
	case err != nil:
		return nil, err
	}
	if a.MemberRoles, err = st.ListMemberRoles(ctx, g.ID, userID); err != nil {
		return nil, err
	}
	return a, nil
}

// IsMember tells whether the user is a member (the owner always is).
func (a *Access) IsMember() bool { return a.Member != nil }

// everyone returns the @everyone role's permissions.
func (a *Access) everyone() uint64 {
	for _, r := range a.Roles {
		if r.ID == a.Guild.ID {
			return r.Permissions
		}
	}
	return DefaultEveryone
}

// Base returns the member's guild-wide permissions: @everyone's and those of the member's roles,
// MANAGE_CHANNELS for a member given it, every bit for the owner and for ADMINISTRATOR (rule
// PERM-1). 0 for a non-member.
func (a *Access) Base() uint64 {
	if a.Member == nil {
		return 0
	}
	if a.Guild.OwnerID == a.Member.UserID {
		return permAll
	}
	perms := a.everyone()
	for _, id := range a.MemberRoles {
		for _, r := range a.Roles {
			if r.ID == id {
				perms |= r.Permissions
			}
		}
	}
	if a.Member.ManageChannels {
		perms |= PermManageChannels
	}
	if perms&PermAdministrator != 0 {
		return permAll
	}
	return perms
}

// In returns the member's permissions in a channel with the given overwrites: the base
// permissions, then the @everyone overwrite, the roles' overwrites (denies, then allows) and the
// member's own overwrite, as the platform computes them (rule PERM-1).
func (a *Access) In(overwrites []store.ChannelOverwrite) uint64 {
	perms := a.Base()
	if perms == permAll || a.Member == nil {
		return perms
	}
	var roleAllow, roleDeny uint64
	var member *store.ChannelOverwrite
	for i := range overwrites {
		o := &overwrites[i]
		switch {
		case o.Type == store.OverwriteRole && o.TargetID == a.Guild.ID:
			perms = perms&^o.Deny | o.Allow
		case o.Type == store.OverwriteRole && HasRole(a.MemberRoles, o.TargetID):
			roleAllow |= o.Allow
			roleDeny |= o.Deny
		case o.Type == store.OverwriteMember && o.TargetID == a.Member.UserID:
			member = o
		}
	}
	perms = perms&^roleDeny | roleAllow
	if member != nil {
		perms = perms&^member.Deny | member.Allow
	}
	if perms&PermViewChannel == 0 { // a channel one cannot see grants nothing
		return 0
	}
	return perms
}

// Channel returns the member's permissions in ch, reading its overwrites.
func (a *Access) Channel(ctx context.Context, st store.Store, ch *store.GuildChannel) (uint64, error) {
	if a.Member == nil {
		return 0, nil
	}
	ows, err := st.ListChannelOverwrites(ctx, ch.ID)
	if err != nil {
		return 0, err
	}
	return a.In(ows), nil
}

func HasRole(roles []uint64, id uint64) bool {
	for _, r := range roles {
		if r == id {
			return true
		}
	}
	return false
}
