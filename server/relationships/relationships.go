// Package relationships serves friends, friend requests and blocks: the platform-account
// relationships and the in-game relationships of each application, stored in the service's
// store (two rows per pair, one per side).
//
// # Routes (under /api/v10, Bearer)
//
//	GET    /users/@me/relationships                 relationships.read   -> [relationship]
//	POST   /users/@me/relationships                 relationships.write  {username} -> 204 (send or accept)
//	PUT    /users/@me/relationships/{user_id}       relationships.write  {type?} -> 204: type 2 blocks; 1 or none sends or accepts
//	DELETE /users/@me/relationships/{user_id}       relationships.write  -> 204: unfriend, cancel, reject or unblock
//	GET    /users/@me/game-relationships            relationships.read   -> [relationship] of the token's application
//	POST   /users/@me/game-relationships            relationships.write  {username} -> 204
//	PUT    /users/@me/game-relationships/{user_id}  relationships.write  -> 204 (send or accept)
//	DELETE /users/@me/game-relationships/{user_id}  relationships.write  -> 204
//	PATCH  /users/@me/settings                      relationships.write  {custom_status_privacy} -> settings
//
// A relationship object is {id, type, user, nickname, is_spam_request, since} (game ones add
// application_id); types follow the platform: Friend 1, Blocked 2, PendingIncoming 3,
// PendingOutgoing 4.
//
// # Events
//
// Each side whose row changes gets RELATIONSHIP_ADD, RELATIONSHIP_UPDATE or RELATIONSHIP_REMOVE
// (platform rows, on every session) or GAME_RELATIONSHIP_ADD/UPDATE/REMOVE (game rows, on the
// sessions of that application), with the relationship object as d (type 0 on REMOVE).
//
// The user of a relationship object carries application_profiles (sdkpp): the other user's game
// profiles in the application of the token (list routes) or of the game relationship (events).
// A platform event reaches sessions of every application, so its user carries none; before it,
// each application in which the other user has profiles gets APPLICATION_PROFILES_UPDATE on the
// user's sessions of that application.
//
// # Rules
//
//   - A request to a user who has a pending request to the caller accepts it.
//   - Blocking removes every relationship between the two (platform and game, both sides) except
//     the other's block of the caller; a blocked user's requests fail with 80000, and requests to
//     a user the caller blocks with 50007.
//   - REL-1: an incoming request is marked is_spam_request when its sender made SpamBurst or more
//     other friend requests (still pending) within SpamWindow before it, by the service's clock.
package relationships

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	gwire "sdkpp/wire/gateway"

	"sdkpp/internal/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/internal/outbox"
	"sdkpp/server/order"
	"sdkpp/server/scopes"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/server/users"
	"sdkpp/wire"
)

// The spam heuristic of rule REL-1.
const (
	SpamBurst  = 5
	SpamWindow = 10 * time.Minute
)

// Notifier delivers events to a user's gateway sessions; *gateway.Hub is one. A Notifier that
// is also an outbox.Stager (the gateway) is given a change's events in its transaction instead
// (Stage).
type Notifier interface {
	Dispatch(userID uint64, event string, data any)
	DispatchApp(appID, userID uint64, event string, data any)
	// DispatchAppMany is DispatchApp to each of userIDs once.
	DispatchAppMany(appID uint64, userIDs []uint64, event string, data any)
}

// Service serves the relationship routes. Set its fields before Register.
type Service struct {
	Store    store.Store
	Clock    clock.Clock
	Logger   *slog.Logger
	Notifier Notifier // nil: no realtime delivery
	// OnChange, when set, runs after a commit that changed what a and b are to each other (for
	// example presence, which friends see).
	OnChange func(a, b uint64)

	// order holds the keys of a change's two users (userKey) from its transaction until its
	// events and OnChange calls are done, so that each user gets relationship events in commit
	// order: two players' crossing friend requests commit one after the other (pending, then
	// friends), and without it the second's events could reach a player before the first's,
	// leaving its SDK with the older state. Changes between other users go on meanwhile.
	order order.Local
	// Order, when set, is the cluster's order lock (package order), held as order is, so that
	// the nodes of a cluster send each user's relationship events in commit order too. Nil for
	// a node alone.
	Order order.Lock
}

// Register adds the routes to mux (paths relative to the API base).
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("GET /users/@me/relationships", s.route(scopes.RelationshipsRead, s.list(false)))
	mux.HandleFunc("GET /users/@me/game-relationships", s.route(scopes.RelationshipsRead, s.list(true)))
	mux.HandleFunc("POST /users/@me/relationships", s.route(scopes.RelationshipsWrite, s.byName(false)))
	mux.HandleFunc("POST /users/@me/game-relationships", s.route(scopes.RelationshipsWrite, s.byName(true)))
	mux.HandleFunc("PUT /users/@me/relationships/{user_id}", s.route(scopes.RelationshipsWrite, s.put(false)))
	mux.HandleFunc("PUT /users/@me/game-relationships/{user_id}", s.route(scopes.RelationshipsWrite, s.put(true)))
	mux.HandleFunc("DELETE /users/@me/relationships/{user_id}", s.route(scopes.RelationshipsWrite, s.remove(false)))
	mux.HandleFunc("DELETE /users/@me/game-relationships/{user_id}", s.route(scopes.RelationshipsWrite, s.remove(true)))
	mux.HandleFunc("PATCH /users/@me/settings", s.route(scopes.RelationshipsWrite, s.settings))
}

// request is an authenticated request.
type request struct {
	*http.Request
	user, app uint64
}

type handler func(q *request) (any, error)

func (s *Service) route(scope string, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := token.Auth{Store: s.Store, Clock: s.Clock}.Bearer(r)
		if err == nil && !scopes.Has(t.Scopes, scope) {
			err = wire.MissingAccess()
		}
		var out any
		if err == nil {
			out, err = h(&request{Request: r, user: t.UserID, app: t.AppID})
		}
		httpx.Answer(w, r, s.Logger, out, err)
	}
}

// peer reads the user_id path value: a known user other than the caller.
func (s *Service) peer(q *request) (uint64, error) {
	id, err := httpx.PathID(q.Request, "user_id")
	if err != nil {
		return 0, err
	}
	return s.known(q, id)
}

func (s *Service) known(q *request, id uint64) (uint64, error) {
	if id == q.user {
		return 0, wire.InvalidAt("user_id", "RELATIONSHIP_SELF", "You cannot have a relationship with yourself.")
	}
	u, err := s.Store.GetUser(q.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.Bot) {
		return 0, wire.UnknownUser()
	}
	return id, err
}

// kindApp is the app id of a kind of relationship: 0 for the platform's, the token's app for
// game relationships.
func kindApp(q *request, game bool) uint64 {
	if game {
		return q.app
	}
	return 0
}

func (s *Service) list(game bool) handler {
	return func(q *request) (any, error) {
		rows, err := s.Store.ListRelationships(q.Context(), q.user, q.app)
		if err != nil {
			return nil, err
		}
		out := []wire.Relationship{}
		for _, r := range rows {
			if (r.AppID != 0) != game {
				continue
			}
			obj, err := s.Object(q.Context(), s.Store, &r, q.app)
			if err != nil {
				return nil, err
			}
			out = append(out, obj)
		}
		return out, nil
	}
}

// Object is the wire form of r; its user carries the other user's game profiles in profilesApp
// (none when 0).
func (s *Service) Object(ctx context.Context, st store.Store, r *store.Relationship, profilesApp uint64) (wire.Relationship, error) {
	u, err := st.GetUser(ctx, r.PeerID)
	if err != nil {
		return wire.Relationship{}, err
	}
	obj := wire.Relationship{ID: wire.Snowflake(r.PeerID), Type: r.Type, User: users.Object(u, false),
		IsSpamRequest: r.Spam, Since: r.CreatedAt.UTC().Format(time.RFC3339Nano)}
	if profilesApp != 0 {
		if obj.User.ApplicationProfiles, err = users.Profiles(ctx, st, u, profilesApp); err != nil {
			return wire.Relationship{}, err
		}
	}
	if r.AppID != 0 {
		app := wire.Snowflake(r.AppID)
		obj.ApplicationID = &app
	}
	return obj, nil
}

func (s *Service) byName(game bool) handler {
	return func(q *request) (any, error) {
		var body wire.FriendRequest
		if err := DecodeBody(q.Request, &body); err != nil {
			return nil, err
		}
		name := strings.TrimSpace(body.Username)
		if name == "" {
			return nil, wire.Required("username")
		}
		u, err := s.Store.GetUserByUsername(q.Context(), name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, wire.UnknownUser()
		} else if err != nil {
			return nil, err
		}
		peer, err := s.known(q, u.ID)
		if err != nil {
			return nil, err
		}
		return nil, s.request(q, peer, kindApp(q, game))
	}
}

func (s *Service) put(game bool) handler {
	return func(q *request) (any, error) {
		peer, err := s.peer(q)
		if err != nil {
			return nil, err
		}
		var body wire.RelationshipPut
		if q.ContentLength != 0 || q.Header.Get("Content-Type") != "" {
			if err := DecodeBody(q.Request, &body); err != nil {
				return nil, err
			}
		}
		switch {
		case body.Type == nil || *body.Type == store.RelFriend:
			return nil, s.request(q, peer, kindApp(q, game))
		case *body.Type == store.RelBlocked && !game:
			return nil, s.block(q, peer)
		}
		return nil, wire.InvalidAt("type", "BASE_TYPE_CHOICES", "Value must be 1 (friend) or 2 (block, platform relationships only).")
	}
}

func (s *Service) remove(game bool) handler {
	return func(q *request) (any, error) {
		peer, err := s.peer(q)
		if err != nil {
			return nil, err
		}
		app := kindApp(q, game)
		return nil, s.tx(q.Context(), q.user, peer, func(c *changes) error {
			theirs, err := c.get(peer, q.user, app)
			if err != nil {
				return err
			}
			if err := c.set(q.user, peer, app, store.RelNone, false); err != nil {
				return err
			}
			if theirs != nil && theirs.Type != store.RelBlocked {
				return c.set(peer, q.user, app, store.RelNone, false)
			}
			return nil
		})
	}
}

// request sends a friend request from the caller to peer, or accepts peer's.
func (s *Service) request(q *request, peer, app uint64) error {
	ctx := q.Context()
	return s.tx(ctx, q.user, peer, func(c *changes) error {
		// Blocks live on the platform rows.
		if r, err := c.get(peer, q.user, 0); err != nil {
			return err
		} else if r != nil && r.Type == store.RelBlocked {
			return wire.Coded(wire.CodeFriendRequestBlocked, "Friend request blocked")
		}
		if r, err := c.get(q.user, peer, 0); err != nil {
			return err
		} else if r != nil && r.Type == store.RelBlocked {
			return wire.Coded(wire.CodeCannotSendToUser, "Cannot send friend request to a user you block")
		}
		mine, err := c.get(q.user, peer, app)
		if err != nil {
			return err
		}
		switch {
		case mine != nil && mine.Type == store.RelFriend:
			return wire.Coded(wire.CodeAlreadyFriends, "You are already friends with that user")
		case mine != nil && mine.Type == store.RelPendingOutgoing:
			return nil // already sent
		case mine != nil && mine.Type == store.RelPendingIncoming: // accept
			if err := c.set(q.user, peer, app, store.RelFriend, false); err != nil {
				return err
			}
			return c.set(peer, q.user, app, store.RelFriend, false)
		}
		// rule REL-1: a burst of requests marks this one as spam.
		n, err := c.st.CountOutgoingSince(ctx, q.user, c.now.Add(-SpamWindow))
		if err != nil {
			return err
		}
		if err := c.set(q.user, peer, app, store.RelPendingOutgoing, false); err != nil {
			return err
		}
		return c.set(peer, q.user, app, store.RelPendingIncoming, n >= SpamBurst)
	})
}

// block makes the caller block peer, removing every other relationship between them.
func (s *Service) block(q *request, peer uint64) error {
	return s.tx(q.Context(), q.user, peer, func(c *changes) error {
		theirs, err := c.st.ListRelated(q.Context(), q.user) // peer's rows about the caller
		if err != nil {
			return err
		}
		all, err := c.allMine(q.user, peer)
		if err != nil {
			return err
		}
		for _, r := range all {
			if err := c.set(r.UserID, r.PeerID, r.AppID, store.RelNone, false); err != nil {
				return err
			}
		}
		for _, r := range theirs {
			if r.UserID == peer && r.Type != store.RelBlocked {
				if err := c.set(r.UserID, r.PeerID, r.AppID, store.RelNone, false); err != nil {
					return err
				}
			}
		}
		return c.set(q.user, peer, 0, store.RelBlocked, false)
	})
}

func (s *Service) settings(q *request) (any, error) {
	var body wire.PrivacySettings
	if err := DecodeBody(q.Request, &body); err != nil {
		return nil, err
	}
	if body.CustomStatusPrivacy != nil {
		p := *body.CustomStatusPrivacy
		if p < store.PrivacyEveryone || p > store.PrivacyFriendsAndSmallServers {
			return nil, wire.InvalidAt("custom_status_privacy", "BASE_TYPE_CHOICES", "Value must be 0, 1 or 2.")
		}
		if err := s.Store.SetCustomStatusPrivacy(q.Context(), q.user, p); err != nil {
			return nil, err
		}
	}
	p, err := s.Store.CustomStatusPrivacy(q.Context(), q.user)
	if err != nil {
		return nil, err
	}
	return wire.PrivacySettings{CustomStatusPrivacy: &p}, nil
}

// DecodeBody reads a JSON body into v like httpx.DecodeJSON, but a field of the wrong type is a
// 50035 naming the field (as the platform answers), not 50109.
func DecodeBody(r *http.Request, v any) error {
	var raw json.RawMessage
	if err := httpx.DecodeJSON(r, &raw); err != nil {
		return err
	}
	err := json.Unmarshal(raw, v)
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return wire.InvalidAt(te.Field, "BASE_TYPE_BAD_TYPE", "The value has the wrong type.")
	case err != nil:
		return wire.InvalidJSON()
	}
	return nil
}

// ---- transactions and events

// changes collects a transaction's row changes and the events they make.
type changes struct {
	ctx    context.Context
	s      *Service
	st     store.Store
	now    time.Time
	events []event
	pairs  [][2]uint64
}

type event struct {
	user, app uint64
	name      string
	data      wire.Relationship
	// profiles are, by application, the other user with its game profiles there: sent as
	// APPLICATION_PROFILES_UPDATE before a platform event.
	profiles map[uint64]wire.User
}

// dispatches are the gateway's dispatches of c's events, in their order: a platform event,
// after the other user's game profiles in each application (APPLICATION_PROFILES_UPDATE), to
// every session of its user; a game's (GAME_...) to its user's sessions of that game.
func (c *changes) dispatches() []outbox.Dispatch {
	var ds []outbox.Dispatch
	for _, e := range c.events {
		for _, app := range slices.Sorted(maps.Keys(e.profiles)) {
			ds = append(ds, outbox.Dispatch{Users: []uint64{e.user}, App: app, Event: gwire.EventApplicationProfilesUpdate, Data: e.profiles[app]})
		}
		if e.app == 0 {
			ds = append(ds, outbox.Dispatch{Users: []uint64{e.user}, Event: e.name, Data: e.data})
		} else {
			ds = append(ds, outbox.Dispatch{Users: []uint64{e.user}, App: e.app, Event: "GAME_" + e.name, Data: e.data})
		}
	}
	return ds
}

func (c *changes) get(user, peer, app uint64) (*store.Relationship, error) {
	r, err := c.st.GetRelationship(c.ctx, user, peer, app)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return r, err
}

// allMine returns the caller's rows about peer, platform and game, in any application.
func (c *changes) allMine(user, peer uint64) ([]store.Relationship, error) {
	related, err := c.st.ListRelated(c.ctx, peer)
	if err != nil {
		return nil, err
	}
	var out []store.Relationship
	for _, r := range related {
		if r.UserID == user {
			out = append(out, r)
		}
	}
	return out, nil
}

// set writes user's relationship to peer in app (RelNone deletes it) and records the event.
func (c *changes) set(user, peer, app uint64, typ int, spam bool) error {
	old, err := c.get(user, peer, app)
	if err != nil {
		return err
	}
	if old == nil && typ == store.RelNone {
		return nil
	}
	if old != nil && old.Type == typ && old.Spam == spam {
		return nil
	}
	r := &store.Relationship{UserID: user, PeerID: peer, AppID: app, Type: typ, Spam: spam, CreatedAt: c.now}
	if old != nil && old.Type == typ {
		r.CreatedAt = old.CreatedAt
	}
	name := gwire.EventRelationshipUpdate
	switch {
	case typ == store.RelNone:
		name = gwire.EventRelationshipRemove
		err = c.st.DeleteRelationship(c.ctx, user, peer, app)
	case old == nil:
		name = gwire.EventRelationshipAdd
		err = c.st.PutRelationship(c.ctx, r)
	default:
		err = c.st.PutRelationship(c.ctx, r)
	}
	if err != nil {
		return err
	}
	obj, err := c.s.Object(c.ctx, c.st, r, app)
	if err != nil {
		return err
	}
	e := event{user: user, app: app, name: name, data: obj}
	if app == 0 && typ != store.RelNone {
		if e.profiles, err = c.profiles(peer); err != nil {
			return err
		}
	}
	c.events = append(c.events, e)
	c.pairs = append(c.pairs, [2]uint64{user, peer})
	return nil
}

// profiles returns, for each application in which peer has game profiles, peer's user object
// with those profiles.
func (c *changes) profiles(peer uint64) (map[uint64]wire.User, error) {
	u, err := c.st.GetUser(c.ctx, peer)
	if err != nil {
		return nil, err
	}
	all, err := users.AllProfiles(c.ctx, c.st, u)
	if err != nil {
		return nil, err
	}
	out := make(map[uint64]wire.User, len(all))
	for app, list := range all {
		obj := users.Object(u, false)
		obj.ApplicationProfiles = list
		out[app] = obj
	}
	return out, nil
}

// userKey is the order lock (package order) and outbox key of the relationship changes of a
// user: a change between a and b holds both users' keys, so each user's events keep their
// commit order, and the events for each user are staged under that user's key.
func userKey(id uint64) string { return "rel:" + strconv.FormatUint(id, 10) }

// tx runs fn, a change between users a and b, in a transaction under both users' order locks
// (userKey) and, once committed, sends the events and calls OnChange. With a Notifier that is
// an outbox.Stager (the gateway), the events are staged in the transaction and published from
// it: on a cluster, a node that dies after the commit leaves them for the next holder of either
// user's order lock to publish.
func (s *Service) tx(ctx context.Context, a, b uint64, fn func(c *changes) error) error {
	keys := []string{userKey(a), userKey(b)}
	defer s.order.Lock(keys...)()
	held, err := order.HoldAll(ctx, s.Order, keys, nil, s.Store)
	if err != nil {
		return err
	}
	defer held.Release() // once the events are sent
	stager, staging := s.Notifier.(outbox.Stager)
	var (
		c       *changes
		publish func()
	)
	// On a cluster the commit runs on the lock's session: the next holder sees it.
	err = held.Store.WithTx(ctx, func(st store.Store) error {
		c = &changes{ctx: ctx, s: s, st: st, now: s.Clock.Now()}
		if err := fn(c); err != nil || !staging {
			return err
		}
		var err error
		publish, err = c.stage(stager, a, b)
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case publish != nil:
		publish()
	case s.Notifier != nil:
		for _, d := range c.dispatches() {
			for _, u := range d.Users {
				if d.App == 0 {
					s.Notifier.Dispatch(u, d.Event, d.Data)
				} else {
					s.Notifier.DispatchApp(d.App, u, d.Event, d.Data)
				}
			}
		}
	}
	if s.OnChange != nil {
		seen := map[[2]uint64]bool{}
		for _, p := range c.pairs {
			if p[0] > p[1] {
				p[0], p[1] = p[1], p[0]
			}
			if !seen[p] {
				seen[p] = true
				s.OnChange(p[0], p[1])
			}
		}
	}
	return nil
}

// stage stages c's events (their dispatches), each to one of a and b, the change's users,
// under that user's key, and returns what publishes them all. An event for another user, whose
// key is not held, fails the change.
func (c *changes) stage(stager outbox.Stager, a, b uint64) (func(), error) {
	byUser := map[uint64][]outbox.Dispatch{}
	var users []uint64 // in the order of their first event
	for _, d := range c.dispatches() {
		if len(d.Users) != 1 || d.Users[0] != a && d.Users[0] != b {
			return nil, fmt.Errorf("relationships: an event of a change between %d and %d for users %v", a, b, d.Users)
		}
		u := d.Users[0]
		if byUser[u] == nil {
			users = append(users, u)
		}
		byUser[u] = append(byUser[u], d)
	}
	var publish []func()
	for _, u := range users {
		p, err := stager.Stage(c.ctx, c.st, userKey(u), byUser[u])
		if err != nil {
			return nil, err
		}
		publish = append(publish, p)
	}
	return func() {
		for _, p := range publish {
			p()
		}
	}, nil
}

// Friends returns the users who are friends of userID, on the platform or in any game, and
// for each whether the friendship is a platform one.
func Friends(ctx context.Context, st store.Store, userID uint64) (map[uint64]bool, error) {
	rows, err := st.ListRelated(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := map[uint64]bool{}
	for _, r := range rows {
		if r.Type == store.RelFriend {
			out[r.UserID] = out[r.UserID] || r.AppID == 0
		}
	}
	return out, nil
}
