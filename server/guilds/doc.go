// Package guilds serves the Guild resource of the platform's API: the guilds a user is in,
// a guild, its roles and members, a bot's own member (rule MEM-1), leaving a guild, prune
// (GLD-2), bot sharding of the guild list (GLD-1) and the removed Create Guild routes (GLD-5).
//
// # Routes (under /api/v10; Bearer with guilds, or Bot)
//
//	GET    /users/@me/guilds                      [partial guild {id, name, icon, owner, permissions, features}];
//	                                              a bot may give ?shard= (rule GLD-1)
//	GET    /guilds/{guild_id}[?with_counts=true]  guild
//	GET    /guilds/{guild_id}/roles               [role]
//	GET    /guilds/{guild_id}/roles/member-counts {role_id: count}
//	GET    /guilds/{guild_id}/members?limit=&after= [member] by user id
//	GET    /guilds/{guild_id}/members/{user_id}   member
//	PATCH  /guilds/{guild_id}/members/@me         a bot's nick, avatar, banner, bio (MEM-1)
//	DELETE /users/@me/guilds/{guild_id}           204; the guild's bots get GUILD_MEMBER_REMOVE
//	GET    /guilds/{guild_id}/prune               {pruned}; POST (Begin Guild Prune) through Actions
//	POST   /guilds, /guilds/templates/{code}      403: apps cannot create guilds (GLD-5)
//
// Permissions in the partial guild are the platform's string-serialized bits (see package
// guildaccess, rule PERM-1).
//
// # Errors
//
// 401 without a valid token; 403 50001 for a token without the scope or a non-member; 404 10004
// Unknown Guild; 400 50035 naming a malformed path id or field.
//
// Guilds cannot be made through the public API (SPEC 4.2: "Create guild: removed"); Create makes
// them for dev mode seeding and the dev route POST /dev/guilds.
package guilds
