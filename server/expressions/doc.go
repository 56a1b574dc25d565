// Package expressions serves a guild's expressions and events in the platform's API: the Emoji
// and Guild Scheduled Event resources, with the dated permissions of creating them (rules VER-1,
// ERR-1: a bot needs CREATE_GUILD_EXPRESSIONS or CREATE_EVENTS from their date, the MANAGE_
// permission before it).
//
// # Routes (under /api/v10; Bearer with guilds, or Bot)
//
//	GET    /guilds/{guild_id}/emojis                       [emoji]
//	POST   /guilds/{guild_id}/emojis                       emoji (name, image data URI, roles)
//	DELETE /guilds/{guild_id}/emojis/{emoji_id}            204
//	GET    /guilds/{guild_id}/scheduled-events             [scheduled event]
//	POST   /guilds/{guild_id}/scheduled-events             scheduled event
//	DELETE /guilds/{guild_id}/scheduled-events/{event_id}  204
//
// The POST routes are served through one pattern with other packages' (guildaccess.Base.Actions).
//
// # Errors
//
// 401 without a valid token; 403 50001 for a non-member, 50013 without the permission; 404 10004
// Unknown Guild, 10014 Unknown Emoji, 10070 Unknown Guild Scheduled Event; 400 50035 naming a
// malformed path id or field.
package expressions
