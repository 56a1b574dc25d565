// Package guildaccess is what the guild resource packages (guilds, channels, messages, invites,
// expressions) share, and nothing they serve: who a guild route's caller is (Caller, Base.Route),
// what the caller may do in a guild and its channels (Access, rule PERM-1), the objects every
// guild route answers with (guild, role, member, channel, GUILD_CREATE, with the channel
// obfuscation of rule GW-1 and the visibility of GCL-1), the guild events bots get by intent
// (Base.GuildEvent, Base.MemberChanged), and the two routers through which routes of several
// packages share one pattern (Base.Shared with the DM routes, Base.Actions for POST
// /guilds/{guild_id}/{action}). It imports none of those packages.
//
// # Permissions
//
// A member's permissions are @everyone's (DefaultEveryone for a guild without stored roles)
// and those of the member's roles, plus MANAGE_CHANNELS for a member given it, or every bit for
// the owner and ADMINISTRATOR; in a channel, the channel's overwrites apply after (Access.In).
// Permissions on the wire are the platform's string-serialized bits.
package guildaccess
