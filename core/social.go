package core

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/rpc"
	gwire "sdkpp/wire/gateway"

	"sdkpp/core/records"
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
		c.social.join.Post(func(f ClientActivityJoinCallback) { f(d.Secret) })
		c.social.joinWithApp.Post(func(f ClientActivityJoinWithApplicationCallback) { f(app, d.Secret) })
		return nil
	})
}

// ---- gateway events

// onSocialDispatch applies a social event (core/social.Decode): a relationship of either graph,
// a user's game profiles, a presence or an activity invite.
func (c *Client) onSocialDispatch(event string, data json.RawMessage) {
	ev, err := social.Decode(event, data)
	switch {
	case err != nil:
		c.logf(LoggingSeverityWarning, "%v", err)
	case ev.Relationship != nil:
		c.applyRelationship(ev.Relationship, ev.Change)
	case ev.Profiles != nil:
		id := uint64(ev.Profiles.ID)
		c.users.Put(users.Of(ev.Profiles))
		if c.users.SetProfiles(map[uint64][]wire.ApplicationProfile{id: ev.Profiles.ApplicationProfiles}) {
			c.handlers.userUpdated.Post(func(f ClientUserUpdatedCallback) { f(id) })
		}
	case ev.Presence != nil:
		id := uint64(ev.Presence.User.ID)
		if c.social.state.ApplyPresence(*ev.Presence) {
			c.handlers.relationshipGroupsUpdated.Post(func(f ClientRelationshipGroupsUpdatedCallback) { f(id) })
		}
		c.handlers.userUpdated.Post(func(f ClientUserUpdatedCallback) { f(id) })
	default:
		slot := &c.handlers.activityInviteUpdated
		if ev.InviteCreated {
			slot = &c.handlers.activityInviteCreated // rule EVT-1: accepted on one device, heard on every one
		}
		invite := records.InviteFromWire(*ev.Invite)
		slot.Post(func(f ClientActivityInviteCallback) { f(invite) })
	}
}

// applyRelationship applies a relationship event of either graph and queues its handlers.
func (c *Client) applyRelationship(rel *wire.Relationship, ev gwire.RelationshipEvent) {
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
		c.handlers.relationshipCreated.Post(func(f ClientRelationshipCreatedCallback) { f(id, platform) })
	case gwire.Removed:
		c.handlers.relationshipDeleted.Post(func(f ClientRelationshipDeletedCallback) { f(id, platform) })
	}
	if wasFriend || isFriend {
		c.handlers.relationshipGroupsUpdated.Post(func(f ClientRelationshipGroupsUpdatedCallback) { f(id) })
	}
	c.handlers.userUpdated.Post(func(f ClientUserUpdatedCallback) { f(id) })
}

// ---- relationships

// names returns the names of a cached user.
func (c *Client) names(id uint64) (social.Names, bool) {
	u, ok := c.users.Get(id)
	return social.Names{Username: u.Username, Display: u.DisplayName()}, ok
}

// handlesOf returns the views mk makes of ids, in order; nil for none.
func handlesOf[H any](ids []uint64, mk func(uint64) *H) []*H {
	var out []*H
	for _, id := range ids {
		out = append(out, mk(id))
	}
	return out
}

// relCall sends one relationship request, after checking the player's side is want (any when
// want is nil) so that Accept, Reject and Cancel fail clearly instead of doing something else.
func (c *Client) relCall(what string, req rest.Request, game bool, userID uint64, want *RelationshipType, cb Callback[func(*ClientResult)]) {
	check := sdkerr.InvalidIf(userID == 0 && req.JSON == nil, "%s: userId is 0", what)
	if h := (RelationshipHandle{c: c, id: userID}); want != nil && check == nil {
		have := h.DiscordRelationshipType()
		if game {
			have = h.GameRelationshipType()
		}
		check = sdkerr.InvalidIf(have != *want, "%s: the relationship with user %d is %s, not %s", what, userID, have, *want)
	}
	authCall(c, what, check, cb, func(ctx context.Context, auth string) error {
		req.Auth = auth
		return c.api.Do(ctx, req, nil)
	})
}

func typeRef(t RelationshipType) *RelationshipType { return &t }

func (c *Client) sendByName(what, username string, game bool, cb Callback[func(*ClientResult)]) {
	if strings.TrimSpace(username) == "" {
		resultOnce(c, cb).Fire(func() { cb.Fn(resultOf(sdkerr.Invalid("%s: the username is empty", what))) })
		return
	}
	c.relCall(what, social.ByName(game, username), game, 0, nil, cb)
}

// RemoveDiscordAndGameFriend removes the game friendship and then the platform one.
func (c *Client) RemoveDiscordAndGameFriend(userId uint64, cb Callback[ClientUpdateRelationshipCallback]) {
	authCall(c, "RemoveDiscordAndGameFriend", sdkerr.InvalidIf(userId == 0, "RemoveDiscordAndGameFriend: userId is 0"), cb,
		func(ctx context.Context, auth string) error {
			for _, game := range []bool{true, false} {
				req := social.Delete(game, userId)
				req.Auth = auth
				if err := c.api.Do(ctx, req, nil); err != nil {
					return err
				}
			}
			return nil
		})
}

// RelationshipHandle is a live view of what a user is to the player.
type RelationshipHandle struct {
	c  *Client
	id uint64
}

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

// ---- user handle: presence

// Status returns the user's online status; Offline when unknown.
func (h *UserHandle) Status() StatusType {
	if h.c.isClosed() {
		return StatusTypeOffline
	}
	return records.StatusOf(h.c.social.state.Status(h.id))
}

// GameActivity returns the user's activity in the current game, if any.
func (h *UserHandle) GameActivity() *Activity {
	if h.c.isClosed() {
		return nil
	}
	if a := h.c.social.state.GameActivity(h.id, h.c.appID.Load()); a != nil {
		return records.ActivityFromWire(*a)
	}
	return nil
}
