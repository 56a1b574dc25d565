// Package channels serves the Channel resource of guilds in the platform's API: a guild's
// channels, one channel, and Modify Channel with its slowmode interval (the slowmode itself is
// kept when a message is sent, package messages), and tells lobbies which channels a user may
// link (MayLink, LinkedLobby).
//
// # Routes (under /api/v10; Bearer with guilds, or Bot)
//
//	GET   /guilds/{guild_id}/channels  [channel] sorted by position (rule GCH-1), from Nov 16, 2026
//	                                   only those the member can view (GCL-1)
//	GET   /channels/{channel_id}       channel of a guild (the DM route shares the path: Shared)
//	PATCH /channels/{channel_id}       name, topic, rate_limit_per_user (VER-1); MANAGE_CHANNELS
//
// A channel of the list is {id, type, guild_id, name, position, parent_id, is_linkable,
// is_viewable_and_writeable_by_all_members, linked_lobby?}: type is the platform's channel type,
// parent_id the id of its category or null (GCH-1), is_linkable true for a text channel the
// caller may link to a lobby, linked_lobby {application_id, lobby_id} when a live lobby links it.
// The owner and members with MANAGE_CHANNELS may link the guild's text channels to lobbies (see
// package lobbies, PATCH /lobbies/{id}/channel-linking).
//
// # Errors
//
// 401 without a valid token; 403 50001 for a non-member or a channel the caller cannot view,
// 50013 without MANAGE_CHANNELS; 404 10004 Unknown Guild, 10003 Unknown Channel; 400 50035
// naming a malformed path id or field.
package channels
