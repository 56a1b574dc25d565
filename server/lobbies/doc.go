// Package lobbies serves lobbies and lobby messages: groups of users of one application (game)
// who chat together. Lobbies are made by a player with a shared secret (PUT /lobbies, rule LOB-1)
// or by the application's backend; each belongs to one application, so the same secret used by
// two applications makes two lobbies.
//
// # Routes (under /api/v10)
//
//	PUT    /lobbies                          Bearer   {secret, idle_timeout_seconds?, lobby_metadata?, member_metadata?} -> 200 lobby
//	POST   /lobbies                          Bot      {metadata?, members? [<= 25 {id, metadata?, flags?, additional_name?}], idle_timeout_seconds?} -> 200 lobby
//	GET    /lobbies/{id}                     Bearer (member) or Bot -> 200 lobby
//	PATCH  /lobbies/{id}                     Bot      {metadata?, idle_timeout_seconds?, members?} -> 200 lobby
//	DELETE /lobbies/{id}                     Bot      -> 204 (also when already gone)
//	PUT    /lobbies/{id}/members/{user_id}   Bot      {metadata?, flags?, additional_name?} -> 200 member
//	DELETE /lobbies/{id}/members/{user_id}   Bot      -> 204 (also when not a member)
//	DELETE /lobbies/{id}/members/@me         Bearer   -> 204 (leave; only lobbies made by PUT /lobbies)
//	POST   /lobbies/{id}/members/bulk        Bot      [1..25 {id, metadata?, flags?, additional_name?, remove_member?}] -> 200 [member]
//	POST   /lobbies/{id}/messages            Bearer (member) {content, metadata?, flags?} -> 200 message
//	GET    /lobbies/{id}/messages?limit=     Bearer (member) or Bot -> 200 [message], newest first
//	PUT    /lobbies/{id}/messages/{message_id}/moderation-metadata   Bot   {"key": "value", ...} -> 204
//
// Bearer tokens must carry lobbies.write (granted by sdk.social_layer) and see only lobbies of
// their application; Bot tokens only their application's.
//
// Objects (see package wire): lobby {id, application_id, metadata, members}; member {id,
// metadata, flags, additional_name?}; message {id, type, content, lobby_id, channel_id, author,
// lobby_member {additional_name?}, metadata, moderation_metadata, flags, application_id,
// timestamp, edited_timestamp}. Empty maps are sent as null.
//
// # Semantics
//
//   - PUT /lobbies joins the lobby of the caller's application whose secret it is, creating it
//     first when there is none (LOB-1). The secret (1 to 250 characters) is stored hashed. On a
//     join, lobby_metadata, when given, replaces the lobby's metadata and member_metadata the
//     caller's; idle_timeout_seconds applies only when the lobby is created. A secret can be used
//     for 30 days: afterwards the lobby lives on but the secret makes a new lobby.
//   - Metadata maps are replaced, never merged; null clears them. Absent fields keep their value.
//     A member's flags allow only CanLinkLobby (1).
//   - additional_name (1 to 80 characters) is set only on the Bot routes (PUT member, bulk, POST
//     and PATCH members): the Bearer routes ignore the field (rule MSG-2). A message records its
//     author's additional_name when it is sent and shows it as lobby_member.additional_name.
//   - Bulk (LOB-4): 1 to 25 operations, applied in order in one transaction, all or nothing;
//     remove_member true removes. The answer lists the upserted members. As on the platform, an
//     unknown user fails the whole request (404 10013) and a user already in 100 lobbies of the
//     game is silently left out (also on POST and PATCH); PUT member answers that case 30001.
//   - PATCH members replaces the member list: members not listed are removed.
//   - Messages (LOB-2): content 1 to 2000 characters, not only white space; metadata a string map
//     of at most 1000 characters; flags only SUPPRESS_EMBEDS (4) and SUPPRESS_NOTIFICATIONS
//     (4096). GET (LOB-3) returns at most limit (1 to 200, default 50) messages of the last 72
//     hours, newest first. With after=<message id> they are the oldest ones above that id (still
//     newest first): a client that missed messages pages forward from the last id it saw.
//   - Moderation metadata (MODR-1, MSG-3): a string map of at most 5 keys, keys at most 1024
//     characters, values at most 2000; it replaces the message's and shows on the message object.
//
// # Limits and idle expiry
//
// Lobby and member metadata: 1000 characters, keys and values together. 1000 members per lobby
// (30033), 100 lobbies per user per game (30001). A lobby expires when idle_timeout_seconds (5 to
// 604800, default 300) pass without activity: its creation, a join or member change, a PATCH, a
// message, or KeepAlive (which the service calls when a member's gateway connection starts or
// ends). While a member is connected (Connected) it does not expire. An expired lobby is
// unknown at once; the goroutine of Start deletes it and sends LOBBY_DELETE, timed by the
// service's clock. A message writes only itself, not its lobby: the store reads a lobby's newest
// message as its latest activity, and that goroutine carries the stored expiry of a lobby its
// messages keep alive forward when it comes, at most once per idle period.
//
// # Errors
//
// 401 {"code": 0} without valid credentials; 403 50001 for a Bearer token without lobbies.write
// and for non-members reading or writing a lobby; 403 50013 for leaving a lobby the backend made;
// 404 10031 Unknown Lobby for a lobby that does not exist, expired or is another application's;
// 404 10008 for an unknown message; 404 10013 for an unknown user; 400 50035 naming the field for
// every invalid field, wrong type, bad path id or bad limit ({"errors": {"members": {"0": {"id":
// {"_errors": [{code, message}]}}}}}, the body itself as {"errors": {"_errors": [...]}}); 400
// 50109 for malformed JSON; 415 for a body that is not application/json. A failed request
// changes nothing.
//
// # Events
//
// LOBBY_MESSAGE_CREATE is queued to the application's webhook with each message, in the
// message's transaction (rule WH-2). Setting moderation metadata sends no webhook, as on the
// platform (a metadata-only update is delivered to game clients only); LOBBY_MESSAGE_UPDATE then
// goes to the members in real time.
//
// The optional Notifier receives, after each commit and with the lobby's application:
// LOBBY_CREATE (the lobby) for the members of
// a new lobby and for each user who joins one; LOBBY_UPDATE when its metadata or idle timeout
// changes; LOBBY_DELETE ({id}) to its members when it is deleted or expires;
// LOBBY_MEMBER_ADD/_UPDATE/_REMOVE ({lobby_id, member}) to every member (and the removed user);
// LOBBY_MESSAGE_CREATE and LOBBY_MESSAGE_UPDATE (the message) to every member.
//
// A new message is the exception to "after each commit": once Start has run, it goes to the
// members (its author last) as soon as it is accepted, and is committed in a group with the
// messages accepted meanwhile by the goroutines that wait for it (package groupcommit); the
// sender's answer and every other operation wait for that commit. A message sent with nonce and
// enforce_nonce is kept with its nonce, so that the same send repeated within NonceWindow, even
// across a restart, answers with the first message.
//
// On a cluster (Order set) a message is stored before it is published, both under its lobby's
// order lock; the messages that arrive meanwhile go together as the next group: one hold of the
// lock, one transaction and one publish for several messages, in id order (cluster.go). With a
// Stager their events are stored in the transaction's outbox and published from there.
package lobbies
