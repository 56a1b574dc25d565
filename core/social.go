package core

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"sdkpp/core/rpc"
	gwire "sdkpp/wire/gateway"

	"sdkpp/core/rest"
	"sdkpp/core/social"
	"sdkpp/core/users"
	"sdkpp/wire"
)

// socialState is the Client's cache of relationships, presences and the player's own presence
// (core/social, its own lock), and the handlers of their events.
type socialState struct {
	state social.State

	join        handlerSlot[ClientActivityJoinCallback]
	joinWithApp handlerSlot[ClientActivityJoinWithApplicationCallback]
}

// SetActivityJoinCallback sets the handler of joining through the platform's desktop client:
// the player accepted an invite or joined a friend's party there, and the game gets the join
// secret. Setting it subscribes to the desktop client's ACTIVITY_JOIN (SetApplicationId first).
func (c *Client) SetActivityJoinCallback(cb Callback[ClientActivityJoinCallback]) {
	setHandler(c, &c.social.join, cb)
	c.subscribeActivityJoin()
}

// SetActivityJoinWithApplicationCallback is SetActivityJoinCallback with the party's application,
// which is a sibling application's id for its parties.
func (c *Client) SetActivityJoinWithApplicationCallback(cb Callback[ClientActivityJoinWithApplicationCallback]) {
	setHandler(c, &c.social.joinWithApp, cb)
	c.subscribeActivityJoin()
}

// subscribeActivityJoin subscribes to ACTIVITY_JOIN once; each event runs both join handlers.
func (c *Client) subscribeActivityJoin() {
	if c.rpc.Subscribed(subActivityJoin) {
		return
	}
	c.subscribeRPC(subActivityJoin, rpc.EvtActivityJoin, c.scope.NewScope(nil), func(data json.RawMessage) func() {
		var d rpc.ActivityJoin
		if err := json.Unmarshal(data, &d); err != nil || d.Secret == "" {
			c.logf(LoggingSeverityWarning, "malformed ACTIVITY_JOIN from the desktop client")
			return nil
		}
		Secrets.Add(d.Secret)
		app := c.appID.Load()
		if id, err := strconv.ParseUint(d.ApplicationID, 10, 64); err == nil && id != 0 {
			app = id
		}
		postHandler(c, &c.social.join, func(f ClientActivityJoinCallback) { f(d.Secret) })
		postHandler(c, &c.social.joinWithApp, func(f ClientActivityJoinWithApplicationCallback) { f(app, d.Secret) })
		return nil
	})
}

// ---- gateway events

// onRelationshipDispatch applies a relationship event of either graph (gwire.RelationshipEvents).
func (c *Client) onRelationshipDispatch(event string, data json.RawMessage) {
	ev := gwire.RelationshipEvents[event]
	rel, ok := decodeEvent(c, event, data, func(r *wire.Relationship) bool { return r.ID != 0 })
	if !ok {
		return
	}
	platform, removed := !ev.Game, ev.Change == gwire.Removed
	id := uint64(rel.ID)
	c.users.Put(users.Of(&rel.User))
	if ev.Game && !removed && rel.User.ID != 0 {
		// A game relationship's user carries its profiles in this game; a platform one's
		// cannot (APPLICATION_PROFILES_UPDATE came before it).
		c.users.SetProfiles(map[uint64][]wire.ApplicationProfile{uint64(rel.User.ID): rel.User.ApplicationProfiles})
	}
	wasFriend, isFriend := c.social.state.Apply(*rel, platform, removed)
	switch ev.Change {
	case gwire.Added:
		postHandler(c, &c.handlers.relationshipCreated, func(f ClientRelationshipCreatedCallback) { f(id, platform) })
	case gwire.Removed:
		postHandler(c, &c.handlers.relationshipDeleted, func(f ClientRelationshipDeletedCallback) { f(id, platform) })
	}
	if wasFriend || isFriend {
		postHandler(c, &c.handlers.relationshipGroupsUpdated, func(f ClientRelationshipGroupsUpdatedCallback) { f(id) })
	}
	postHandler(c, &c.handlers.userUpdated, func(f ClientUserUpdatedCallback) { f(id) })
}

// decodeEvent decodes a dispatch's data; it logs and reports false when the data is malformed
// or valid rejects it.
func decodeEvent[T any](c *Client, event string, data json.RawMessage, valid func(*T) bool) (*T, bool) {
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil || !valid(v) {
		c.logf(LoggingSeverityWarning, "malformed %s", event)
		return nil, false
	}
	return v, true
}

// onProfilesDispatch applies APPLICATION_PROFILES_UPDATE: a user's profiles in this game.
func (c *Client) onProfilesDispatch(event string, data json.RawMessage) {
	u, ok := decodeEvent(c, event, data, func(u *wire.User) bool { return u.ID != 0 })
	if !ok {
		return
	}
	id := uint64(u.ID)
	c.users.Put(users.Of(u))
	if c.users.SetProfiles(map[uint64][]wire.ApplicationProfile{id: u.ApplicationProfiles}) {
		postHandler(c, &c.handlers.userUpdated, func(f ClientUserUpdatedCallback) { f(id) })
	}
}

// onPresenceDispatch applies PRESENCE_UPDATE.
func (c *Client) onPresenceDispatch(event string, data json.RawMessage) {
	p, ok := decodeEvent(c, event, data, func(p *wire.PresenceUpdate) bool { return p.User.ID != 0 })
	if !ok {
		return
	}
	id := uint64(p.User.ID)
	if c.social.state.ApplyPresence(*p) {
		postHandler(c, &c.handlers.relationshipGroupsUpdated, func(f ClientRelationshipGroupsUpdatedCallback) { f(id) })
	}
	postHandler(c, &c.handlers.userUpdated, func(f ClientUserUpdatedCallback) { f(id) })
}

// onInviteDispatch applies ACTIVITY_INVITE_CREATE and ACTIVITY_INVITE_UPDATE.
func (c *Client) onInviteDispatch(event string, data json.RawMessage) {
	w, ok := decodeEvent(c, event, data, func(w *wire.ActivityInvite) bool { return w.ID != 0 })
	if !ok {
		return
	}
	slot := &c.handlers.activityInviteUpdated
	if event == gwire.EventActivityInviteCreate || (w.Accepted && w.IsValid) {
		slot = &c.handlers.activityInviteCreated // rule EVT-1: accepted on one device, heard on every one
	}
	postHandler(c, slot, func(f ClientActivityInviteCallback) { f(inviteFromWire(*w)) })
}

// ---- relationships

// GetRelationships returns views of every relationship, by user id.
func (c *Client) GetRelationships() []*RelationshipHandle {
	ids := c.social.state.IDs()
	out := make([]*RelationshipHandle, len(ids))
	for i, id := range ids {
		out[i] = &RelationshipHandle{c: c, id: id}
	}
	return out
}

// GetRelationshipsByGroup returns the friends (platform or game) of one group, sorted by display
// name then id: playing this game, online elsewhere, or offline.
func (c *Client) GetRelationshipsByGroup(group RelationshipGroupType) []*RelationshipHandle {
	ids := c.social.state.FriendsIn(social.Group(group), c.appID.Load(), c.names)
	out := make([]*RelationshipHandle, len(ids))
	for i, id := range ids {
		out[i] = &RelationshipHandle{c: c, id: id}
	}
	return out
}

// names returns the names of a cached user.
func (c *Client) names(id uint64) (social.Names, bool) {
	u, ok := c.users.Get(id)
	return social.Names{Username: u.Username, Display: u.DisplayName()}, ok
}

// GetRelationshipHandle returns a view of the relationship with a user (type None when none).
func (c *Client) GetRelationshipHandle(userId uint64) *RelationshipHandle {
	return &RelationshipHandle{c: c, id: userId}
}

// SearchFriendsByUsername returns the friends whose username or display name contains s,
// ignoring case, sorted by display name.
func (c *Client) SearchFriendsByUsername(s string) []*UserHandle {
	var out []*UserHandle
	for _, id := range c.social.state.SearchFriends(s, c.names) {
		out = append(out, &UserHandle{c: c, id: id})
	}
	return out
}

// relPath is the route of a relationship with userID: the platform's or the game's.
func relPath(game bool, userID uint64) string {
	base := "/users/@me/relationships"
	if game {
		base = "/users/@me/game-relationships"
	}
	if userID == 0 {
		return base
	}
	return base + "/" + strconv.FormatUint(userID, 10)
}

// relCall sends one relationship request, after checking the player's side is want (any when
// want is nil) so that Accept, Reject and Cancel fail clearly instead of doing something else.
func (c *Client) relCall(what string, req rest.Request, game bool, userID uint64, want *RelationshipType, cb Callback[func(*ClientResult)]) {
	auth := c.authHeader()
	fail := func(err error) {
		once := resultOnce(c, cb)
		once.Fire(func() { cb.Fn(resultOf(err)) })
	}
	if auth == "" {
		fail(errNotReady)
		return
	}
	if userID == 0 && req.JSON == nil {
		fail(invalid("%s: userId is 0", what))
		return
	}
	if want != nil {
		h := RelationshipHandle{c: c, id: userID}
		have := h.DiscordRelationshipType()
		if game {
			have = h.GameRelationshipType()
		}
		if have != *want {
			fail(invalid("%s: the relationship with user %d is %s, not %s", what, userID, have, *want))
			return
		}
	}
	req.Auth = auth
	c.resultCall(req, what, cb, nil)
}

func typeRef(t RelationshipType) *RelationshipType { return &t }

func (c *Client) sendByName(what, username string, game bool, cb Callback[func(*ClientResult)]) {
	if strings.TrimSpace(username) == "" {
		once := resultOnce(c, cb)
		once.Fire(func() { cb.Fn(resultOf(invalid("%s: the username is empty", what))) })
		return
	}
	c.relCall(what, rest.Request{Method: http.MethodPost, Path: relPath(game, 0), JSON: wire.FriendRequest{Username: username}},
		game, 0, nil, cb)
}

// SendDiscordFriendRequest sends a platform friend request by unique username, or accepts theirs.
func (c *Client) SendDiscordFriendRequest(username string, cb Callback[ClientSendFriendRequestCallback]) {
	c.sendByName("SendDiscordFriendRequest", username, false, Callback[func(*ClientResult)](cb))
}

// SendGameFriendRequest sends a game friend request by unique username, or accepts theirs.
func (c *Client) SendGameFriendRequest(username string, cb Callback[ClientSendFriendRequestCallback]) {
	c.sendByName("SendGameFriendRequest", username, true, Callback[func(*ClientResult)](cb))
}

func putRel(game bool, id uint64) rest.Request {
	return rest.Request{Method: http.MethodPut, Path: relPath(game, id), JSON: struct{}{}}
}

func deleteRel(game bool, id uint64) rest.Request {
	return rest.Request{Method: http.MethodDelete, Path: relPath(game, id)}
}

// SendDiscordFriendRequestById sends a platform friend request, or accepts theirs.
func (c *Client) SendDiscordFriendRequestById(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("SendDiscordFriendRequestById", putRel(false, userId), false, userId, nil, Callback[func(*ClientResult)](cb))
}

// SendGameFriendRequestById sends a game friend request, or accepts theirs.
func (c *Client) SendGameFriendRequestById(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("SendGameFriendRequestById", putRel(true, userId), true, userId, nil, Callback[func(*ClientResult)](cb))
}

// AcceptDiscordFriendRequest accepts a pending incoming platform friend request.
func (c *Client) AcceptDiscordFriendRequest(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("AcceptDiscordFriendRequest", putRel(false, userId), false, userId, typeRef(RelationshipTypePendingIncoming), Callback[func(*ClientResult)](cb))
}

// AcceptGameFriendRequest accepts a pending incoming game friend request.
func (c *Client) AcceptGameFriendRequest(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("AcceptGameFriendRequest", putRel(true, userId), true, userId, typeRef(RelationshipTypePendingIncoming), Callback[func(*ClientResult)](cb))
}

// RejectDiscordFriendRequest rejects a pending incoming platform friend request.
func (c *Client) RejectDiscordFriendRequest(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("RejectDiscordFriendRequest", deleteRel(false, userId), false, userId, typeRef(RelationshipTypePendingIncoming), Callback[func(*ClientResult)](cb))
}

// RejectGameFriendRequest rejects a pending incoming game friend request.
func (c *Client) RejectGameFriendRequest(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("RejectGameFriendRequest", deleteRel(true, userId), true, userId, typeRef(RelationshipTypePendingIncoming), Callback[func(*ClientResult)](cb))
}

// CancelDiscordFriendRequest cancels a pending outgoing platform friend request.
func (c *Client) CancelDiscordFriendRequest(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("CancelDiscordFriendRequest", deleteRel(false, userId), false, userId, typeRef(RelationshipTypePendingOutgoing), Callback[func(*ClientResult)](cb))
}

// CancelGameFriendRequest cancels a pending outgoing game friend request.
func (c *Client) CancelGameFriendRequest(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("CancelGameFriendRequest", deleteRel(true, userId), true, userId, typeRef(RelationshipTypePendingOutgoing), Callback[func(*ClientResult)](cb))
}

// RemoveGameFriend removes a game friend.
func (c *Client) RemoveGameFriend(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("RemoveGameFriend", deleteRel(true, userId), true, userId, typeRef(RelationshipTypeFriend), Callback[func(*ClientResult)](cb))
}

// RemoveDiscordAndGameFriend removes the game friendship and then the platform one.
func (c *Client) RemoveDiscordAndGameFriend(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	auth := c.authHeader()
	once := resultOnce(c, cb)
	if auth == "" || userId == 0 {
		err := errNotReady
		if auth != "" {
			err = invalid("RemoveDiscordAndGameFriend: userId is 0")
		}
		once.Fire(func() { cb.Fn(resultOf(err)) })
		return
	}
	c.start(func(ctx context.Context) {
		var err error
		for _, game := range []bool{true, false} {
			req := deleteRel(game, userId)
			req.Auth = auth
			if err = c.api.Do(ctx, req, nil); err != nil {
				c.logf(LoggingSeverityWarning, "RemoveDiscordAndGameFriend failed: %v", err)
				break
			}
		}
		once.Fire(func() { cb.Fn(resultOf(err)) })
	})
}

// BlockUser blocks a user; every other relationship with them goes.
func (c *Client) BlockUser(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	blocked := int(RelationshipTypeBlocked)
	c.relCall("BlockUser", rest.Request{Method: http.MethodPut, Path: relPath(false, userId), JSON: wire.RelationshipPut{Type: &blocked}},
		false, userId, nil, Callback[func(*ClientResult)](cb))
}

// UnblockUser unblocks a user.
func (c *Client) UnblockUser(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	c.relCall("UnblockUser", deleteRel(false, userId), false, userId, typeRef(RelationshipTypeBlocked), Callback[func(*ClientResult)](cb))
}

// RelationshipHandle is a live view of what a user is to the player.
type RelationshipHandle struct {
	c  *Client
	id uint64
}

// Clone returns another view of the same relationship.
func (h *RelationshipHandle) Clone() *RelationshipHandle { v := *h; return &v }

func (h *RelationshipHandle) rel() social.Rel {
	if h.c.isClosed() {
		return social.Rel{}
	}
	return h.c.social.state.Rel(h.id)
}

// Id returns the other user's id (0 once the Client is gone).
func (h *RelationshipHandle) Id() uint64 {
	if h.c.isClosed() {
		return 0
	}
	return h.id
}

// DiscordRelationshipType returns the platform-account relationship.
func (h *RelationshipHandle) DiscordRelationshipType() RelationshipType {
	return RelationshipType(h.rel().Platform)
}

// GameRelationshipType returns the in-game relationship.
func (h *RelationshipHandle) GameRelationshipType() RelationshipType {
	return RelationshipType(h.rel().Game)
}

// IsSpamRequest reports whether a pending incoming request is believed to be spam (rule REL-1).
func (h *RelationshipHandle) IsSpamRequest() bool { return h.rel().Spam }

// User returns the other user, if known.
func (h *RelationshipHandle) User() *UserHandle { return h.c.GetUser(h.id) }

// ---- user handle: presence

// Status returns the user's online status; Offline when unknown.
func (h *UserHandle) Status() StatusType {
	if h.c.isClosed() {
		return StatusTypeOffline
	}
	switch h.c.social.state.Status(h.id) {
	case "online":
		return StatusTypeOnline
	case "idle":
		return StatusTypeIdle
	case "dnd":
		return StatusTypeDnd
	case "invisible":
		return StatusTypeInvisible
	}
	return StatusTypeOffline
}

// GameActivity returns the user's activity in the current game, if any.
func (h *UserHandle) GameActivity() *Activity {
	if h.c.isClosed() {
		return nil
	}
	if a := h.c.social.state.GameActivity(h.id, h.c.appID.Load()); a != nil {
		return activityFromWire(*a)
	}
	return nil
}

// Relationship returns a view of what the user is to the player.
func (h *UserHandle) Relationship() *RelationshipHandle { return &RelationshipHandle{c: h.c, id: h.id} }
