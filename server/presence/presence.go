// Package presence keeps who is online and what they play (rich presence), and serves activity
// invites and join requests. Presence is session state: it lives in memory, is set by the
// gateway's Presence Update (op 3, and Identify's presence), and clears when the user's last
// connected session ends (a game's activities when the user's last session of that game ends).
//
// # Presence
//
// op 3 d is {since, activities, status, afk}; status is online, idle, dnd or invisible. Each
// activity is checked with wire.ValidateActivity; an invalid presence is dropped (and logged),
// never closing the connection. The service sets application_id to the session's game and, when
// the game gives no name, name to the application's name (ACT-4); join secrets never leave the
// service in presences.
//
// PRESENCE_UPDATE {user: {id}, status, activities, client_status} goes to the user's own sessions
// and to every friend (platform or game); READY carries the friends' presences. Invisible shows
// as offline with no activities to others. Rule GW-5: the custom status (type 4, ACT-1) is left
// out for a viewer who is not a platform friend when the user's privacy is Friends Only, or
// Friends and Small Servers Only and they share only a guild of more than 200 members
// (CustomStatusVisible).
//
// # Invites (under /api/v10, Bearer with activities.write)
//
//	POST /users/{user_id}/activity-invites   {type: 1 Join | 5 JoinRequest, content?, reply_to?} -> 200 invite
//	POST /activity-invites/{invite_id}/accept                                                    -> 200 {join_secret, invite}
//	PUT  /applications/{app_id}/rich-presence (Bot) {cover_image}                                -> 200 settings
//
// A Join invite needs the sender's activity in the game to have a party id and a join secret; a
// join request needs the recipient's. Sender and recipient must be friends (50007 otherwise).
// ACTIVITY_INVITE_CREATE (d: invite) reaches the recipient's sessions of the sender's game and
// of its sibling applications (one parent and its children), not those of unrelated games; the
// invite's application_id tells which game, so a sibling application can recognise it (INV-1).
// channel_id is the DM channel of sender and recipient, opened if needed, where the platform
// shows the invite message; message_id is the invite's id. cover_image
// is the activity's invite_cover_image, else the application's rich-presence cover image
// (ACT-3). Accepting answers with the sender's join secret and sends ACTIVITY_INVITE_UPDATE with
// accepted true to every connected session of the acceptor (EVT-1). An invite is valid while the
// sender's activity keeps that party and for at most InviteLifetime; when it stops being valid
// the recipient gets ACTIVITY_INVITE_UPDATE with is_valid false, on the sessions that got the
// invite.
package presence

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	gwire "sdkpp/wire/gateway"

	"sdkpp/internal/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/relationships"
	"sdkpp/server/scopes"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// InviteLifetime is how long an invite stays valid at most.
const InviteLifetime = 6 * time.Hour

// LargeGuild is the member count above which Friends and Small Servers Only hides the custom
// status (rule GW-5).
const LargeGuild = 200

// Hub is the gateway as presence uses it; *gateway.Hub is one.
type Hub interface {
	Dispatch(userID uint64, event string, data any)
	DispatchApp(appID, userID uint64, event string, data any)
	Online(userID uint64) bool
	OnlineApp(appID, userID uint64) bool
}

// Service keeps presences and invites. Set its fields before use.
type Service struct {
	Store  store.Store
	Clock  clock.Clock
	IDs    *snowflake.Generator
	Logger *slog.Logger
	Hub    Hub
	// Share, when set, tells the other nodes of a cluster a user's presence after each change
	// (status offline: the user went offline); they take it with Apply. Nil for a node alone.
	// Each shared presence carries a version, an id from IDs above the version it replaced:
	// every node keeps the presence of the highest version it saw, so that the nodes agree
	// whatever order concurrent changes on different nodes reach them in.
	Share func(userID uint64, p *Shared)
	// ShareInvite, when set, tells the other nodes of a cluster an invite that was sent or
	// accepted here; they take it with ApplyInvite. Nil for a node alone.
	ShareInvite func(SharedInvite)
	// CatchUp, when set, returns once this node has read what the other nodes of a cluster
	// shared before it was called. An invite that finds no party, or an invite or join request
	// unknown here, calls it and looks again: an SDK's presence set, or an invite sent, through
	// another node may not have reached this one yet (a player sets a presence, is answered, then
	// sends an invite over HTTP that the load balancer gives to another node).
	CatchUp func(ctx context.Context) error

	// send orders presence dispatches: each view is made from the current state and handed to
	// the hub under it, so a viewer never gets an older view of a user after a newer one (a
	// relationship change's SendPair racing the user's own presence update once left a friend
	// with the presence from before the update).
	send sync.Mutex

	mu      sync.Mutex
	users   map[uint64]*state
	gone    map[uint64]offlineMark // users offline, with a cluster (Share set): the version of going offline
	offline offlineOrder           // gone's entries as they were marked, for pruneLocked
	invites map[uint64]*wire.ActivityInvite
	secrets map[uint64]string // invite id -> the join secret at the time it was sent
}

// state is a user's presence: the status and each game's activities (with their secrets).
type state struct {
	status     string
	activities map[uint64][]wire.Activity // by application id; custom status under 0
	mark
}

// mark is what a node of a cluster knows of a user's presence besides its content: its version
// (Shared.Version; 0 for a node alone), and whether this node sent a view of the user's presence
// (Broadcast, SendPair), which another node's dispatches of a newer presence may have overtaken
// on the bus.
type mark struct {
	version uint64
	told    bool
}

// Shared is a user's presence as it crosses a cluster's bus (Service.Share, Service.Apply).
type Shared struct {
	Status     string                     `json:"status"`               // offline: the user went offline
	Activities map[uint64][]wire.Activity `json:"activities,omitempty"` // by application id; custom status under 0
	// Version orders the changes of the user's presence across the cluster: a node takes a
	// shared presence only above the version it holds (0: older than every version).
	Version uint64 `json:"version,omitempty"`
}

// statusOffline is the status of a Shared presence of a user who went offline.
const statusOffline = "offline"

// markLocked returns the mark of the user's presence, online or offline. Call with s.mu held.
func (s *Service) markLocked(userID uint64) mark {
	if st := s.users[userID]; st != nil {
		return st.mark
	}
	return s.gone[userID].mark
}

// changedLocked gives the user's presence, which just changed here from one marked prev, a new
// version above prev's, and returns it to share; nil for a node alone. Call with s.mu held.
func (s *Service) changedLocked(userID uint64, prev mark) *Shared {
	if s.Share == nil {
		return nil
	}
	s.pruneLocked()
	m := prev
	m.version = s.IDs.NextAbove(m.version)
	if st := s.users[userID]; st != nil {
		st.mark = m
		delete(s.gone, userID)
	} else {
		s.goneLocked(userID, m)
	}
	return s.sharedLocked(userID)
}

// offlineMark is the mark of a user who is offline, and until when it is kept: OfflineWindow
// after the time in its version and after the last time this node marked it (a view of the user
// it sent then, which is the told of mark, may be overtaken within the window too).
type offlineMark struct {
	mark
	until int64 // Unix nanoseconds
}

// goneLocked marks the presence of a user who is offline, and forgets the oldest marks that
// are out of their window (pruneLocked). Call with s.mu held.
func (s *Service) goneLocked(userID uint64, m mark) {
	s.pruneLocked()
	until := max(snowflake.Time(m.version).UnixNano(), s.Clock.Now().UnixNano()) + int64(OfflineWindow)
	if s.gone == nil {
		s.gone = map[uint64]offlineMark{}
	}
	if old, ok := s.gone[userID]; ok && old.until >= until {
		until = old.until
	} else {
		s.offline.push(offlineAt{user: userID, until: until})
	}
	s.gone[userID] = offlineMark{mark: m, until: until}
}

// OfflineWindow is how long a node of a cluster remembers the version of a user who went offline
// (the mark in Service.gone), counted from the time in the version or from when the node marked
// it, whichever is later. The version refuses the shares of older presences that reach the node
// after it (Apply); once it is forgotten, the node would take one, and the user would show online
// again. None can come that late, by construction:
//
//   - a presence is shared (Service.Share, the gateway hub's Share) right after its version is
//     made, and the bus stores it within the gateway's publish timeout (10 s), or never: the
//     NATS client retries a publish only within that timeout, and the stream stores a retried
//     publish once;
//   - Reshare shares again a presence of an older version, but only one that the resharing node
//     holds online, so one it took before it read the offline version: that is within the
//     offline version's time, plus how late that node reads the bus, plus the publish timeout;
//   - each node takes the shares in the bus's one order.
//
// The rest of the window is a margin for the nodes' clocks (a version carries the time of the
// node that made it) and for a node that reads the bus behind the others. Memory for offline
// users is then bounded by the users who went offline in the last OfflineWindow, not by every
// user who went offline since the node started.
const OfflineWindow = 2 * time.Minute

// pruneBatch is the most marks of offline users one call of goneLocked (or one change) forgets
// (pruneLocked): each call adds at most one, so the oldest are forgotten as fast as they come, in
// O(1) per call.
const pruneBatch = 2

// offlineOrder lists the marks of Service.gone in the order they were made, so that the oldest
// can be forgotten without a walk over the map. An entry whose mark changed since (the user came
// online, or was marked again) stays until its turn and is then skipped.
type offlineOrder struct {
	list  []offlineAt
	first int // list[:first] is forgotten
}

// offlineAt is an entry of offlineOrder: the user's mark is kept until then (offlineMark.until).
type offlineAt struct {
	user  uint64
	until int64
}

func (o *offlineOrder) push(e offlineAt) { o.list = append(o.list, e) }

// len returns the number of entries not yet forgotten.
func (o *offlineOrder) len() int { return len(o.list) - o.first }

// pop forgets the oldest entry, returning it.
func (o *offlineOrder) pop() offlineAt {
	e := o.list[o.first]
	o.list[o.first] = offlineAt{}
	o.first++
	if o.first == len(o.list) { // empty: its room goes too, as after a burst of offline users
		o.list, o.first = nil, 0
	} else if o.first >= len(o.list)/2 && o.first >= 64 {
		o.list = o.list[:copy(o.list, o.list[o.first:])]
		o.first = 0
	}
	return e
}

// pruneLocked forgets at most pruneBatch of the oldest marks of offline users that are out of
// their window (offlineMark.until). The order is that of marking, in which until is almost
// always increasing (a version made on a node whose clock is ahead can break it): a mark is
// never forgotten before its time, at worst a little after. Call with s.mu held.
func (s *Service) pruneLocked() {
	if s.offline.len() == 0 {
		return
	}
	now := s.Clock.Now().UnixNano()
	for range pruneBatch {
		if s.offline.len() == 0 || now < s.offline.list[s.offline.first].until {
			break
		}
		e := s.offline.pop()
		if m, ok := s.gone[e.user]; ok && m.until == e.until {
			delete(s.gone, e.user)
		}
	}
	if len(s.gone) == 0 && s.gone != nil {
		s.gone = nil // a map keeps its room after its entries go; a burst of offline users leaves none
	}
}

// sharedLocked is the user's presence to share. Call with s.mu held.
func (s *Service) sharedLocked(userID uint64) *Shared {
	st := s.users[userID]
	if st == nil {
		return &Shared{Status: statusOffline, Version: s.gone[userID].version}
	}
	return &Shared{Status: st.status, Activities: maps.Clone(st.activities), Version: st.version}
}

// share tells the other nodes the user's presence, when Share is set (p is not nil).
func (s *Service) share(userID uint64, p *Shared) {
	if s.Share != nil && p != nil {
		s.Share(userID, p)
	}
}

// Apply takes a user's presence that another node of the cluster shared (nil or status offline:
// offline), when its version is above the one held here: it becomes the user's presence here. An
// older one, which a change made elsewhere in the meantime overtook, is dropped. That node
// already told the user's sessions and friends, and the recipients of the user's invites that
// the change made invalid; here they are only marked so. When this node too told them of the
// user's presence, which may reach them after that node's dispatches, it tells them again.
func (s *Service) Apply(userID uint64, p *Shared) {
	if p == nil {
		p = &Shared{Status: statusOffline}
	}
	s.mu.Lock()
	s.pruneLocked()
	m := s.markLocked(userID)
	if m.version != 0 && p.Version <= m.version {
		s.mu.Unlock()
		return
	}
	m.version = p.Version
	if p.Status == statusOffline {
		delete(s.users, userID)
		s.goneLocked(userID, m)
	} else {
		if s.users == nil {
			s.users = map[uint64]*state{}
		}
		acts := p.Activities
		if acts == nil {
			acts = map[uint64][]wire.Activity{}
		}
		s.users[userID] = &state{status: p.Status, activities: acts, mark: m}
		delete(s.gone, userID)
	}
	s.staleInvitesLocked(userID, 0)
	s.mu.Unlock()
	if m.told {
		if err := s.Broadcast(context.Background(), userID); err != nil {
			s.Logger.Warn("presence: broadcast failed", "user_id", userID, "err", err)
		}
	}
}

// Reshare shares again the presence of each user for whom here says true (users with a session
// on this node), and the valid invites they sent: another node started.
func (s *Service) Reshare(here func(userID uint64) bool) {
	type user struct {
		id uint64
		p  *Shared
	}
	var users []user
	var invites []SharedInvite
	s.mu.Lock()
	for id := range s.users {
		if here(id) {
			users = append(users, user{id, s.sharedLocked(id)})
		}
	}
	for id, inv := range s.invites {
		if inv.IsValid && here(uint64(inv.SenderID)) {
			invites = append(invites, SharedInvite{Invite: *inv, Secret: s.secrets[id]})
		}
	}
	s.mu.Unlock()
	for _, u := range users {
		s.share(u.id, u.p)
	}
	for _, inv := range invites {
		s.shareInvite(inv.Invite, inv.Secret)
	}
}

// SharedInvite is an activity invite as it crosses a cluster's bus (Service.ShareInvite,
// Service.ApplyInvite), with the join secret it gives when accepted.
type SharedInvite struct {
	Invite wire.ActivityInvite `json:"invite"`
	Secret string              `json:"secret,omitempty"`
}

// ApplyInvite takes an invite that another node of the cluster sent or accepted: it can be
// accepted here, and the sender's presence changes made here invalidate it. An invite that this
// node knows to be invalid stays so.
func (s *Service) ApplyInvite(x SharedInvite) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv := x.Invite
	if old := s.invites[uint64(inv.ID)]; old != nil {
		old.IsValid = old.IsValid && inv.IsValid
		old.Accepted = old.Accepted || inv.Accepted
		return
	}
	s.rememberLocked(&inv, x.Secret)
	s.staleInvitesLocked(uint64(inv.SenderID), uint64(inv.ApplicationID))
}

// rememberLocked keeps inv and its join secret until it can be accepted no more, and forgets the
// invites past their lifetime.
func (s *Service) rememberLocked(inv *wire.ActivityInvite, secret string) {
	if s.invites == nil {
		s.invites, s.secrets = map[uint64]*wire.ActivityInvite{}, map[uint64]string{}
	}
	for id, old := range s.invites {
		if t, err := time.Parse(time.RFC3339Nano, old.CreatedAt); err == nil && s.Clock.Now().Sub(t) >= InviteLifetime {
			delete(s.invites, id)
			delete(s.secrets, id)
		}
	}
	s.invites[uint64(inv.ID)] = inv
	if secret != "" {
		s.secrets[uint64(inv.ID)] = secret
	}
}

// shareInvite tells the other nodes of inv, when ShareInvite is set.
func (s *Service) shareInvite(inv wire.ActivityInvite, secret string) {
	if s.ShareInvite != nil {
		s.ShareInvite(SharedInvite{Invite: inv, Secret: secret})
	}
}

// CustomStatusVisible tells whether a viewer sees the user's custom status (rule GW-5): with
// privacy Friends Only only platform friends do; with Friends and Small Servers Only, friends and
// members of shared guilds of at most LargeGuild members (largestSharedGuild is the member count
// of the largest guild they share, 0 for none).
func CustomStatusVisible(privacy int, platformFriend bool, largestSharedGuild int) bool {
	switch {
	case platformFriend || privacy == store.PrivacyEveryone:
		return true
	case privacy == store.PrivacyFriendsOnly:
		return false
	default:
		return largestSharedGuild <= LargeGuild
	}
}

// OnPresence applies a Presence Update (op 3) or an Identify's presence of a session of appID.
func (s *Service) OnPresence(userID, appID uint64, raw json.RawMessage) {
	var p wire.Presence
	if err := json.Unmarshal(raw, &p); err != nil {
		s.Logger.Warn("presence: malformed presence dropped", "user_id", userID, "err", err)
		return
	}
	if err := s.Set(context.Background(), userID, appID, &p); err != nil {
		s.Logger.Warn("presence: invalid presence dropped", "user_id", userID, "err", err)
	}
}

// Set validates p and makes it the user's status and the game's activities, then tells the user's
// sessions and friends.
func (s *Service) Set(ctx context.Context, userID, appID uint64, p *wire.Presence) error {
	switch p.Status {
	case "":
		p.Status = "online"
	case "online", "idle", "dnd", "invisible":
	default:
		return wire.InvalidAt("status", "BASE_TYPE_CHOICES", "Value must be online, idle, dnd or invisible.")
	}
	app, err := s.Store.GetApplication(ctx, appID)
	if err != nil {
		return err
	}
	var game, custom []wire.Activity
	for i := range p.Activities {
		a := p.Activities[i]
		if err := wire.ValidateActivity("activities."+strconv.Itoa(i), &a); err != nil {
			return err
		}
		if a.Type == wire.ActivityCustomStatus { // rule ACT-1
			a.ApplicationID, a.Secrets, a.Party = nil, nil, nil
			if a.Name == "" {
				a.Name = "Custom Status"
			}
			custom = append(custom, a)
			continue
		}
		id := wire.Snowflake(appID)
		a.ApplicationID = &id
		a.ParentApplicationID = nil
		if app.ParentID != 0 {
			parent := wire.Snowflake(app.ParentID)
			a.ParentApplicationID = &parent
		}
		if a.Name == "" { // rule ACT-4: a name overrides the application's
			a.Name = app.Name
		}
		a.CreatedAt = s.Clock.Now().UnixMilli()
		game = append(game, a)
	}
	s.mu.Lock()
	if s.users == nil {
		s.users = map[uint64]*state{}
	}
	prev := s.markLocked(userID)
	st := s.users[userID]
	if st == nil {
		st = &state{activities: map[uint64][]wire.Activity{}}
		s.users[userID] = st
	}
	st.status = p.Status
	setOrDelete(st.activities, appID, game)
	setOrDelete(st.activities, 0, custom)
	stale := s.staleInvitesLocked(userID, appID)
	shared := s.changedLocked(userID, prev)
	s.mu.Unlock()
	s.invalidate(stale)
	s.share(userID, shared) // before the dispatches, which the other nodes read after it
	return s.Broadcast(ctx, userID)
}

func setOrDelete(m map[uint64][]wire.Activity, k uint64, v []wire.Activity) {
	if len(v) == 0 {
		delete(m, k)
	} else {
		m[k] = v
	}
}

// OnSession follows the user's gateway sessions: a first session makes the user online; when the
// last session of a game ends its activities go, and when the last session ends the presence
// goes.
func (s *Service) OnSession(userID, appID uint64) {
	online := s.Hub.Online(userID)
	s.mu.Lock()
	if s.users == nil {
		s.users = map[uint64]*state{}
	}
	prev := s.markLocked(userID)
	st := s.users[userID]
	changed := false
	var stale []*wire.ActivityInvite
	switch {
	case !online && st != nil:
		delete(s.users, userID)
		stale = s.staleInvitesLocked(userID, 0)
		changed = true
	case online && st == nil:
		s.users[userID] = &state{status: "online", activities: map[uint64][]wire.Activity{}}
		changed = true
	case online && !s.Hub.OnlineApp(appID, userID) && st.activities[appID] != nil:
		delete(st.activities, appID)
		stale = s.staleInvitesLocked(userID, appID)
		changed = true
	}
	var shared *Shared
	if changed {
		shared = s.changedLocked(userID, prev)
	}
	s.mu.Unlock()
	s.invalidate(stale)
	if changed {
		s.share(userID, shared)
		if err := s.Broadcast(context.Background(), userID); err != nil {
			s.Logger.Warn("presence: broadcast failed", "user_id", userID, "err", err)
		}
	}
}

// view is the user's presence as viewer sees it (viewer == user: everything but secrets).
func (s *Service) view(userID uint64, self, platformFriend bool, privacy int) wire.PresenceUpdate {
	out := wire.PresenceUpdate{User: wire.PresenceUser{ID: wire.Snowflake(userID)}, Status: "offline",
		Activities: []wire.Activity{}, ClientStatus: map[string]string{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.users[userID]
	if st == nil || (st.status == "invisible" && !self) {
		return out
	}
	out.Status = st.status
	out.ClientStatus["desktop"] = st.status
	apps := make([]uint64, 0, len(st.activities))
	for app := range st.activities {
		apps = append(apps, app)
	}
	slices.Sort(apps)
	for _, app := range apps {
		for _, a := range st.activities[app] {
			if a.Type == wire.ActivityCustomStatus && !self && !CustomStatusVisible(privacy, platformFriend, 0) {
				continue // rule GW-5
			}
			a.Secrets = nil
			out.Activities = append(out.Activities, a)
		}
	}
	return out
}

// Broadcast sends the user's presence to the user's sessions and to every friend.
func (s *Service) Broadcast(ctx context.Context, userID uint64) error {
	friends, err := relationships.Friends(ctx, s.Store, userID)
	if err != nil {
		return err
	}
	privacy, err := s.Store.CustomStatusPrivacy(ctx, userID)
	if err != nil {
		return err
	}
	s.send.Lock()
	defer s.send.Unlock()
	s.Hub.Dispatch(userID, gwire.EventPresenceUpdate, s.view(userID, true, true, privacy))
	for f, platform := range friends {
		s.Hub.Dispatch(f, gwire.EventPresenceUpdate, s.view(userID, false, platform, privacy))
	}
	s.told(userID)
	return nil
}

// told notes that this node sent views of the user's presence (see mark), with a cluster.
func (s *Service) told(userID uint64) {
	if s.Share == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.users[userID]; st != nil {
		st.told = true
		return
	}
	m := s.gone[userID].mark
	m.told = true
	s.goneLocked(userID, m)
}

// SendPair tells a and b each other's presence, after their relationship changed (offline when
// they are no longer friends).
func (s *Service) SendPair(ctx context.Context, a, b uint64) error {
	for _, p := range [][2]uint64{{a, b}, {b, a}} {
		user, viewer := p[0], p[1]
		friends, err := relationships.Friends(ctx, s.Store, user)
		if err != nil {
			return err
		}
		platform, friend := friends[viewer]
		privacy, err := s.Store.CustomStatusPrivacy(ctx, user)
		if err != nil {
			return err
		}
		s.send.Lock()
		v := wire.PresenceUpdate{User: wire.PresenceUser{ID: wire.Snowflake(user)}, Status: "offline",
			Activities: []wire.Activity{}, ClientStatus: map[string]string{}}
		if friend {
			v = s.view(user, false, platform, privacy)
		}
		s.Hub.Dispatch(viewer, gwire.EventPresenceUpdate, v)
		if friend {
			s.told(user)
		}
		s.send.Unlock()
	}
	return nil
}

// ReadyPresences returns the presences of the user's friends, for READY.
func (s *Service) ReadyPresences(ctx context.Context, userID uint64) ([]wire.PresenceUpdate, error) {
	friends, err := relationships.Friends(ctx, s.Store, userID) // friendships are symmetric
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, 0, len(friends))
	for f := range friends {
		ids = append(ids, f)
	}
	slices.Sort(ids)
	out := []wire.PresenceUpdate{}
	for _, f := range ids {
		privacy, err := s.Store.CustomStatusPrivacy(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, s.view(f, false, friends[f], privacy))
	}
	return out, nil
}

// activity returns a copy of the user's current activity in app, with its secrets, or nil.
func (s *Service) activity(userID, appID uint64) *wire.Activity {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.users[userID]; st != nil && len(st.activities[appID]) > 0 {
		a := st.activities[appID][0]
		return &a
	}
	return nil
}

// ---- invites

// Register adds the invite routes to mux (paths relative to the API base).
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("POST /users/{user_id}/activity-invites", s.bearer(s.sendInvite))
	mux.HandleFunc("POST /activity-invites/{invite_id}/accept", s.bearer(s.accept))
	mux.HandleFunc("PUT /applications/{app_id}/rich-presence", s.setCover)
}

func (s *Service) bearer(h func(r *http.Request, t *store.Token) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := token.Auth{Store: s.Store, Clock: s.Clock}.Bearer(r)
		if err == nil && !scopes.Has(t.Scopes, scopes.ActivitiesWrite) {
			err = wire.MissingAccess()
		}
		var out any
		if err == nil {
			out, err = h(r, t)
		}
		if err != nil {
			httpx.Error(w, r, s.Logger, err)
			return
		}
		httpx.JSON(w, http.StatusOK, out)
	}
}

func coverKey(appID uint64) string {
	return "rich_presence_cover_image/" + strconv.FormatUint(appID, 10)
}

// setCover serves PUT /applications/{app_id}/rich-presence: the application's backend sets the
// cover image invites fall back to (rule ACT-3).
func (s *Service) setCover(w http.ResponseWriter, r *http.Request) {
	err := func() error {
		app, err := token.Auth{Store: s.Store, Clock: s.Clock}.Bot(r)
		if err != nil {
			return err
		}
		id, ok := wire.ParseSnowflake(r.PathValue("app_id"))
		if !ok {
			return wire.InvalidAt("app_id", "NUMBER_TYPE_COERCE", "The value is not snowflake.")
		}
		if uint64(id) != app.ID {
			return wire.MissingAccess()
		}
		var body wire.RichPresenceSettings
		if err := relationships.DecodeBody(r, &body); err != nil {
			return err
		}
		if body.CoverImage == nil {
			return wire.Required("cover_image")
		}
		if n := utf8.RuneCountInString(*body.CoverImage); n < 1 || n > 300 {
			return wire.InvalidAt("cover_image", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 300 in length.")
		}
		if err := s.Store.PutSetting(r.Context(), coverKey(app.ID), []byte(*body.CoverImage)); err != nil {
			return err
		}
		httpx.JSON(w, http.StatusOK, body)
		return nil
	}()
	if err != nil {
		httpx.Error(w, r, s.Logger, err)
	}
}

func notJoinable(who string) error {
	return wire.InvalidAt("activity", "ACTIVITY_NOT_JOINABLE",
		who+" activity in this game has no party id and join secret.")
}

func (s *Service) sendInvite(r *http.Request, t *store.Token) (any, error) {
	ctx := r.Context()
	recipient, err := httpx.PathID(r, "user_id")
	if err != nil {
		return nil, err
	}
	var body wire.ActivityInviteRequest
	if err := relationships.DecodeBody(r, &body); err != nil {
		return nil, err
	}
	switch {
	case body.Type != wire.ActivityActionJoin && body.Type != wire.ActivityActionJoinRequest:
		return nil, wire.InvalidAt("type", "BASE_TYPE_CHOICES", "Value must be 1 (join) or 5 (join request).")
	case utf8.RuneCountInString(body.Content) > wire.MaxInviteContent || !utf8.ValidString(body.Content):
		return nil, wire.InvalidAt("content", "BASE_TYPE_BAD_LENGTH", "Must be 1024 or fewer in length.")
	case recipient == t.UserID:
		return nil, wire.InvalidAt("user_id", "INVITE_SELF", "You cannot invite yourself.")
	}
	if _, err := s.Store.GetUser(ctx, recipient); errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownUser()
	} else if err != nil {
		return nil, err
	}
	friends, err := relationships.Friends(ctx, s.Store, t.UserID)
	if err != nil {
		return nil, err
	}
	if _, ok := friends[recipient]; !ok {
		return nil, &wire.APIError{Status: http.StatusForbidden, Code: wire.CodeCannotSendToUser, Message: "Cannot send messages to this user"}
	}
	app, err := s.Store.GetApplication(ctx, t.AppID)
	if err != nil {
		return nil, err
	}
	// The party: the sender's for an invite, the recipient's (the host's) for a join request.
	host := t.UserID
	if body.Type == wire.ActivityActionJoinRequest {
		host = recipient
	}
	joinable := func(act *wire.Activity) bool {
		return act != nil && act.Party != nil && act.Party.ID != "" && (body.Type != wire.ActivityActionJoin || act.Secrets != nil && act.Secrets.Join != "")
	}
	act := s.activity(host, t.AppID)
	if !joinable(act) && s.catchUp(ctx) {
		act = s.activity(host, t.AppID)
	}
	if !joinable(act) {
		if host == t.UserID {
			return nil, notJoinable("Your")
		}
		return nil, notJoinable("The recipient's")
	}
	if body.ReplyTo != 0 {
		s.mu.Lock()
		req := s.invites[uint64(body.ReplyTo)]
		s.mu.Unlock()
		if req == nil && s.catchUp(ctx) {
			s.mu.Lock()
			req = s.invites[uint64(body.ReplyTo)]
			s.mu.Unlock()
		}
		if req == nil || req.Type != wire.ActivityActionJoinRequest || uint64(req.RecipientID) != t.UserID ||
			uint64(req.SenderID) != recipient {
			return nil, wire.UnknownInvite()
		}
		if same, err := s.sameFamily(ctx, uint64(req.ApplicationID), t.AppID); err != nil || !same {
			if err != nil {
				return nil, err
			}
			return nil, wire.UnknownInvite()
		}
	}
	cover, err := s.Store.GetSetting(ctx, coverKey(app.ID))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	audience, err := s.familyApps(ctx, recipient, familyRoot(app.ID, app.ParentID)) // rule INV-1
	if err != nil {
		return nil, err
	}
	channel, err := s.dmChannel(ctx, t.UserID, recipient)
	if err != nil {
		return nil, err
	}
	inv := &wire.ActivityInvite{ID: wire.Snowflake(s.IDs.Next()), Type: body.Type, SenderID: wire.Snowflake(t.UserID),
		RecipientID: wire.Snowflake(recipient), ChannelID: wire.Snowflake(channel), ApplicationID: wire.Snowflake(app.ID), PartyID: act.Party.ID,
		SessionID: strconv.FormatUint(t.UserID, 10) + ":" + strconv.FormatUint(app.ID, 10), Content: body.Content,
		CoverImage: string(cover), IsValid: true, CreatedAt: s.Clock.Now().UTC().Format(time.RFC3339Nano)}
	inv.MessageID = inv.ID
	if app.ParentID != 0 {
		p := wire.Snowflake(app.ParentID)
		inv.ParentApplicationID = &p
	}
	if act.Assets != nil && act.Assets.InviteCoverImage != nil { // rule ACT-3
		inv.CoverImage = *act.Assets.InviteCoverImage
	}
	secret := ""
	if act.Secrets != nil {
		secret = act.Secrets.Join
	}
	s.mu.Lock()
	s.rememberLocked(inv, secret)
	out := *inv
	s.mu.Unlock()
	s.shareInvite(out, secret) // before the dispatch, which the other nodes read after it
	s.dispatchInvite(recipient, audience, gwire.EventActivityInviteCreate, out)
	return out, nil
}

// catchUp calls CatchUp, when set, and tells whether it returned with this node caught up
// (a failure is logged: the caller answers from what it knows).
func (s *Service) catchUp(ctx context.Context) bool {
	if s.CatchUp == nil {
		return false
	}
	if err := s.CatchUp(ctx); err != nil {
		s.Logger.Warn("presence: could not catch up with the cluster's bus", "err", err)
		return false
	}
	return true
}

func (s *Service) accept(r *http.Request, t *store.Token) (any, error) {
	id, err := httpx.PathID(r, "invite_id")
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	s.mu.Lock()
	inv := s.invites[uint64(id)]
	s.mu.Unlock()
	if inv == nil && s.catchUp(r.Context()) {
		s.mu.Lock()
		inv = s.invites[uint64(id)]
		s.mu.Unlock()
	}
	s.mu.Lock()
	var invApp uint64
	if inv != nil {
		invApp = uint64(inv.ApplicationID)
	}
	s.mu.Unlock()
	// The invite is the recipient's, and only within the game it was sent in or its siblings: a
	// token of another game must not learn that game's join secret.
	if inv == nil || uint64(inv.RecipientID) != t.UserID {
		return nil, wire.UnknownInvite()
	}
	if same, err := s.sameFamily(r.Context(), invApp, t.AppID); err != nil || !same {
		if err != nil {
			return nil, err
		}
		return nil, wire.UnknownInvite()
	}
	s.mu.Lock()
	created, _ := time.Parse(time.RFC3339Nano, inv.CreatedAt)
	if now.Sub(created) >= InviteLifetime {
		inv.IsValid = false
	}
	secret := s.secrets[uint64(id)]
	switch {
	case inv.Type != wire.ActivityActionJoin:
		s.mu.Unlock()
		return nil, wire.InvalidAt("invite_id", "INVITE_NOT_JOIN", "Only a join invite can be accepted; answer a join request with an invite.")
	case !inv.IsValid:
		s.mu.Unlock()
		return nil, &wire.APIError{Status: http.StatusBadRequest, Code: wire.CodeUnknownInvite, Message: "The invite is no longer valid"}
	}
	inv.Accepted = true
	out := *inv
	s.mu.Unlock()
	s.shareInvite(out, secret)
	// rule EVT-1: every connected session of the player hears of it.
	s.Hub.Dispatch(t.UserID, gwire.EventActivityInviteUpdate, out)
	return wire.ActivityInviteAccepted{JoinSecret: secret, Invite: out}, nil
}

// staleInvitesLocked marks invalid the valid invites whose sender is userID in appID (any app
// when 0) and whose party the sender's activity no longer has; it returns copies of them.
func (s *Service) staleInvitesLocked(userID, appID uint64) []*wire.ActivityInvite {
	var out []*wire.ActivityInvite
	for _, inv := range s.invites {
		if !inv.IsValid || inv.Type != wire.ActivityActionJoin || uint64(inv.SenderID) != userID ||
			(appID != 0 && uint64(inv.ApplicationID) != appID) {
			continue
		}
		party := ""
		if st := s.users[userID]; st != nil && len(st.activities[uint64(inv.ApplicationID)]) > 0 {
			if p := st.activities[uint64(inv.ApplicationID)][0].Party; p != nil {
				party = p.ID
			}
		}
		if party != inv.PartyID {
			inv.IsValid = false
			c := *inv
			out = append(out, &c)
		}
	}
	return out
}

// invalidate tells the recipients that their invites are no longer valid, on the sessions of
// each invite's application family.
func (s *Service) invalidate(list []*wire.ActivityInvite) {
	for _, inv := range list {
		apps, err := s.familyApps(context.Background(), uint64(inv.RecipientID), inviteRoot(inv))
		if err != nil {
			s.Logger.Warn("invite invalidation not sent", "invite_id", uint64(inv.ID), "err", err)
			continue
		}
		s.dispatchInvite(uint64(inv.RecipientID), apps, gwire.EventActivityInviteUpdate, *inv)
	}
}
