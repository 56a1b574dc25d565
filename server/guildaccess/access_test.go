package guildaccess

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"sdkpp/server/store"
)

// Rule PERM-1: permissions come from @everyone, the member's roles and the channel's overwrites
// (@everyone's, then the roles' denies and allows, then the member's), as the platform computes
// them; the owner and ADMINISTRATOR have every bit; a channel one cannot view grants nothing.
func TestAccessPermissions(t *testing.T) {
	const (
		guild   = 100
		owner   = 1
		member  = 2
		modRole = 10
		admRole = 11
		chanID  = 50
	)
	roles := []store.GuildRole{
		{ID: guild, GuildID: guild, Permissions: PermViewChannel | PermSendMessages},
		{ID: modRole, GuildID: guild, Permissions: PermManageMessages},
		{ID: admRole, GuildID: guild, Permissions: PermAdministrator},
	}
	g := &store.Guild{ID: guild, OwnerID: owner}
	access := func(userID uint64, memberRoles ...uint64) *Access {
		return &Access{Guild: g, Roles: roles, Member: &store.GuildMember{GuildID: guild, UserID: userID}, MemberRoles: memberRoles}
	}
	ow := func(target uint64, typ int, allow, deny uint64) store.ChannelOverwrite {
		return store.ChannelOverwrite{ChannelID: chanID, TargetID: target, Type: typ, Allow: allow, Deny: deny}
	}
	base := PermViewChannel | PermSendMessages
	cases := []struct {
		name string
		a    *Access
		ows  []store.ChannelOverwrite
		want uint64
	}{
		{"@everyone only", access(member), nil, base},
		{"a role adds its bits", access(member, modRole), nil, base | PermManageMessages},
		{"the owner has every bit", access(owner), []store.ChannelOverwrite{ow(guild, store.OverwriteRole, 0, PermViewChannel)}, permAll},
		{"ADMINISTRATOR has every bit", access(member, admRole), []store.ChannelOverwrite{ow(guild, store.OverwriteRole, 0, PermViewChannel)}, permAll},
		{"@everyone overwrite denies", access(member), []store.ChannelOverwrite{ow(guild, store.OverwriteRole, 0, PermSendMessages)}, PermViewChannel},
		{"no view grants nothing", access(member, modRole), []store.ChannelOverwrite{ow(guild, store.OverwriteRole, 0, PermViewChannel)}, 0},
		{"a role overwrite allows over @everyone's deny", access(member, modRole), []store.ChannelOverwrite{
			ow(guild, store.OverwriteRole, 0, PermViewChannel), ow(modRole, store.OverwriteRole, PermViewChannel, 0)}, base | PermManageMessages},
		{"a role's allow wins over another role's deny", access(member, modRole, 12), []store.ChannelOverwrite{
			ow(12, store.OverwriteRole, 0, PermSendMessages), ow(modRole, store.OverwriteRole, PermSendMessages, 0)}, base | PermManageMessages},
		{"the member overwrite comes last", access(member, modRole), []store.ChannelOverwrite{
			ow(modRole, store.OverwriteRole, PermSendMessages, 0), ow(member, store.OverwriteMember, 0, PermSendMessages)}, PermViewChannel | PermManageMessages},
		{"another member's overwrite does not apply", access(member), []store.ChannelOverwrite{
			ow(3, store.OverwriteMember, 0, PermViewChannel)}, base},
		{"a role the member lacks does not apply", access(member), []store.ChannelOverwrite{
			ow(modRole, store.OverwriteRole, PermManageMessages, 0)}, base},
		{"a non-member has none", &Access{Guild: g, Roles: roles}, nil, 0},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, tc.a.In(tc.ows), "PERM-1: %s", tc.name)
	}
	noRoles := &Access{Guild: g, Member: &store.GuildMember{GuildID: guild, UserID: member, ManageChannels: true}}
	assert.Equal(t, DefaultEveryone|PermManageChannels, noRoles.Base(), "PERM-1: a guild without stored roles")
}
