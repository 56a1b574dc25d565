// Package messages serves the Message resource of guild channels in the platform's API: sending,
// listing, reading, editing and deleting messages, their attachments (multipart uploads, served
// at the web base), replies and forwards (message_reference), pins (rule PIN-1), Search Guild
// Messages (GLD-3), the slowmode of a channel when a member sends (VER-1, VER-3), and the
// messages interactions post (package interactions).
//
// # Routes (under /api/v10; Bearer with guilds, or Bot)
//
//	POST   /channels/{channel_id}/messages                       message (JSON or multipart with files)
//	GET    /channels/{channel_id}/messages?before=&after=&around=&limit=  [message], newest first
//	GET    /channels/{channel_id}/messages/{message_id}          message
//	PATCH  /channels/{channel_id}/messages/{message_id}          message (the author)
//	DELETE /channels/{channel_id}/messages/{message_id}          204 (the author or MANAGE_MESSAGES)
//	GET    /channels/{channel_id}/messages/pins, PUT and DELETE .../pins/{message_id}, and the
//	       deprecated GET /channels/{channel_id}/pins, PUT and DELETE .../pins/{message_id}
//	GET    /guilds/{guild_id}/messages/search                    {messages, total_results}
//	GET    /attachments/{channel_id}/{attachment_id}/{filename}?ex=&is=&hm=  (web base) the file's
//	       bytes, while the URL's signature holds (signedurl)
//
// Uploads are spooled to temporary files as they are read and written to the store a chunk at
// a time: a request's memory does not grow with its files. The chunks are written before the
// message's transaction, each a write of its own, so that an upload does not hold SQLite's one
// writer from other requests while its bytes are written. A page of messages is read as a
// whole (page.go): its queries do not grow with its size.
//
// The routes of a channel's messages share their paths with the DM routes (package dms): see
// Shared. Bots get MESSAGE_* events by intent, a message's content only with MESSAGE_CONTENT or
// when the bot wrote the message or is mentioned in it; over REST the same holds for a bot whose
// application may not read message content (guildaccess.AppReadsMessageContent).
//
// # Errors
//
// 401 without a valid token; 403 50001 for a non-member or a channel the caller cannot view,
// 50013 without the permission; 404 10003 Unknown Channel, 10008 Unknown Message; 429 in
// slowmode; 400 50035 naming a malformed path id or field, 50006 for an empty message.
package messages
