package lobbies

import (
	"cmp"
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"time"

	gwire "sdkpp/wire/gateway"

	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/wire"
)

// memberIDs lists the user ids of members.
func memberIDs(members []store.LobbyMember) []uint64 {
	ids := make([]uint64, len(members))
	for i, m := range members {
		ids[i] = m.UserID
	}
	return ids
}

// memberObject is the wire form of a membership of a lobby of appID: connected tells whether
// the member has a live gateway session of that application, and user is the member's user with
// its game profiles in appID (so that the SDK's LobbyMemberHandle::User needs no request).
func (s *Service) memberObject(ctx context.Context, st store.Store, appID uint64, m store.LobbyMember) (wire.LobbyMember, error) {
	u, err := st.GetUser(ctx, m.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return s.memberWith(appID, m, nil, nil), nil // the account is gone: the member has no user
	}
	if err != nil {
		return wire.LobbyMember{}, err
	}
	profiles, err := users.Profiles(ctx, st, u, appID)
	return s.memberWith(appID, m, u, profiles), err
}

// memberWith is memberObject with the member's user (nil when gone) and profiles at hand.
func (s *Service) memberWith(appID uint64, m store.LobbyMember, u *store.User, profiles []wire.ApplicationProfile) wire.LobbyMember {
	out := wire.LobbyMember{ID: wire.Snowflake(m.UserID), Metadata: m.Metadata, Flags: m.Flags,
		Connected: s.Connected != nil && s.Connected(appID, m.UserID)}
	if m.AdditionalName != "" {
		name := m.AdditionalName
		out.AdditionalName = &name
	}
	if u != nil {
		obj := users.Object(u, false)
		obj.ApplicationProfiles = profiles
		out.User = &obj
	}
	return out
}

// lobbyObject is the wire form of a lobby, its members (with their users) and its linked channel.
func (s *Service) lobbyObject(ctx context.Context, st store.Store, l *store.Lobby, members []store.LobbyMember) (wire.Lobby, error) {
	out := wire.Lobby{ID: wire.Snowflake(l.ID), ApplicationID: wire.Snowflake(l.AppID), Metadata: l.Metadata,
		Members: make([]wire.LobbyMember, len(members))}
	us, ids, err := st.ListLobbyMemberUsers(ctx, l.ID, l.AppID)
	if err != nil {
		return out, err
	}
	byID := make(map[uint64]*store.User, len(us))
	for i := range us {
		byID[us[i].ID] = &us[i]
	}
	profiles := map[uint64][]wire.ApplicationProfile{}
	for _, id := range ids {
		if u := byID[id.UserID]; u != nil {
			profiles[id.UserID] = append(profiles[id.UserID], users.Profile(u, id))
		}
	}
	for i, m := range members {
		out.Members[i] = s.memberWith(l.AppID, m, byID[m.UserID], profiles[m.UserID])
	}
	if out.LinkedChannel, err = linkedChannel(ctx, st, l.ID); err != nil {
		return out, err
	}
	last, err := st.LastLobbyMessageID(ctx, l.ID)
	if last != 0 {
		id := wire.Snowflake(last)
		out.LastMessageID = &id
	}
	return out, err
}

func sameMember(a, b store.LobbyMember) bool {
	return a.Flags == b.Flags && a.AdditionalName == b.AdditionalName && maps.Equal(a.Metadata, b.Metadata)
}

// change is one request's change to a lobby and its members, inside a transaction. Member
// changes are written through at once; commit writes the lobby, works out the realtime events by
// comparing the members before and after, and returns the lobby's wire form.
type change struct {
	s       *Service
	st      store.Store
	lobby   *store.Lobby
	now     time.Time
	created bool // the lobby is new: its members get LOBBY_CREATE only
	updated bool // the lobby's own fields changed: LOBBY_UPDATE
	before  map[uint64]store.LobbyMember
	after   map[uint64]store.LobbyMember
	users   map[uint64]bool // user ids checked by checkUser
}

// edit starts a change of an existing lobby.
func (s *Service) edit(ctx context.Context, st store.Store, l *store.Lobby, now time.Time) (*change, error) {
	members, err := st.ListLobbyMembers(ctx, l.ID)
	if err != nil {
		return nil, err
	}
	c := &change{s: s, st: st, lobby: l, now: now, before: map[uint64]store.LobbyMember{},
		after: map[uint64]store.LobbyMember{}, users: map[uint64]bool{}}
	for _, m := range members {
		c.before[m.UserID], c.after[m.UserID] = m, m
	}
	return c, nil
}

// newLobby inserts a lobby and starts its change.
func (s *Service) newLobby(ctx context.Context, st store.Store, out *outbox, l *store.Lobby, now time.Time) (*change, error) {
	touch(l, now)
	if err := st.CreateLobby(ctx, l); err != nil {
		return nil, err
	}
	out.logs = append(out.logs, func() {
		s.Logger.InfoContext(ctx, "lobby created", "lobby_id", l.ID, "application_id", l.AppID, "by_secret", l.FromSecret)
	})
	c, err := s.edit(ctx, st, l, now)
	if c != nil {
		c.created = true
	}
	return c, err
}

// checkUser refuses (404 10013) a user id the application may not put in a lobby: unknown ids,
// bot users and another application's provisional accounts.
func (c *change) checkUser(ctx context.Context, id uint64) error {
	if c.users[id] {
		return nil
	}
	u, err := c.st.GetUser(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (u.Bot || (u.Provisional && u.ProvisionalAppID != c.lobby.AppID))) {
		return wire.UnknownUser()
	}
	if err != nil {
		return err
	}
	c.users[id] = true
	return nil
}

// upsert adds the user or updates the membership with the fields the operation sets. A user who
// is already in MaxLobbiesPerUser lobbies of the game is refused with 30001 when strict, else
// silently left out as the platform does for bulk requests (added is then false). A lobby that
// would pass MaxMembersPerLobby is refused with 30033.
func (c *change) upsert(ctx context.Context, in memberInput, strict bool) (m store.LobbyMember, added bool, err error) {
	if err := c.checkUser(ctx, in.id); err != nil {
		return m, false, err
	}
	m, member := c.after[in.id]
	if !member {
		n, err := c.st.CountUserLobbies(ctx, c.lobby.AppID, in.id, c.now)
		if err != nil {
			return m, false, err
		}
		if n >= MaxLobbiesPerUser {
			if strict {
				return m, false, wire.Coded(wire.CodeMaxLobbies, "Maximum number of lobbies reached (100)")
			}
			return m, false, nil
		}
		if len(c.after) >= MaxMembersPerLobby {
			return m, false, wire.Coded(wire.CodeMaxLobbyMembers, "Maximum number of lobby members reached (1000)")
		}
		m = store.LobbyMember{LobbyID: c.lobby.ID, UserID: in.id, JoinedAt: c.now}
	}
	if in.metadata.set {
		m.Metadata = in.metadata.v
	}
	if in.flags.set {
		m.Flags = int(in.flags.v)
	}
	if in.additionalName.set {
		m.AdditionalName = in.additionalName.v
	}
	if len(m.Metadata) == 0 {
		m.Metadata = nil
	}
	if err := c.st.PutLobbyMember(ctx, &m); err != nil {
		return m, false, err
	}
	c.after[in.id] = m
	return m, true, nil
}

// drop removes the user from the lobby; not being a member is fine.
func (c *change) drop(ctx context.Context, userID uint64) error {
	if _, ok := c.after[userID]; !ok {
		return nil
	}
	if err := c.st.DeleteLobbyMember(ctx, c.lobby.ID, userID); err != nil {
		return err
	}
	delete(c.after, userID)
	return nil
}

// members returns the members after the change in join order.
func (c *change) members(ctx context.Context) ([]store.LobbyMember, error) {
	return c.st.ListLobbyMembers(ctx, c.lobby.ID)
}

// commit restarts the lobby's idle timer, writes it, and queues the events: LOBBY_CREATE to the
// members of a new lobby, or to each user who joined; LOBBY_UPDATE when the lobby's fields
// changed; then LOBBY_MEMBER_REMOVE for each membership that went (to every member after the
// change and the removed user), LOBBY_MEMBER_ADD for each that came, LOBBY_MEMBER_UPDATE for each
// that changed (to every member after the change).
func (c *change) commit(ctx context.Context, out *outbox) (wire.Lobby, []store.LobbyMember, error) {
	touch(c.lobby, c.now)
	if err := c.st.UpdateLobby(ctx, c.lobby); err != nil {
		return wire.Lobby{}, nil, err
	}
	out.expiry = true
	members, err := c.members(ctx)
	if err != nil {
		return wire.Lobby{}, nil, err
	}
	obj, err := c.s.lobbyObject(ctx, c.st, c.lobby, members)
	if err != nil {
		return wire.Lobby{}, nil, err
	}
	obj.Revision = wire.Snowflake(out.rev)
	everyone := memberIDs(members)
	id, app := wire.Snowflake(c.lobby.ID), c.lobby.AppID
	if c.created {
		out.add(app, everyone, gwire.EventLobbyCreate, obj)
		return obj, members, nil
	}
	var joined []uint64
	for _, m := range members {
		if _, ok := c.before[m.UserID]; !ok {
			joined = append(joined, m.UserID)
		}
	}
	out.add(app, joined, gwire.EventLobbyCreate, obj)
	if c.updated {
		out.add(app, everyone, gwire.EventLobbyUpdate, obj)
	}
	event := func(users []uint64, name string, m store.LobbyMember) error {
		mo, err := c.s.memberObject(ctx, c.st, app, m)
		if err == nil {
			out.add(app, users, name, wire.LobbyMemberEvent{LobbyID: id, Member: mo})
		}
		return err
	}
	for uid, m := range sortedMembers(c.before) {
		if _, ok := c.after[uid]; !ok {
			if err := event(append(append([]uint64{}, everyone...), uid), gwire.EventLobbyMemberRemove, m); err != nil {
				return wire.Lobby{}, nil, err
			}
		}
	}
	for _, m := range members {
		if _, was := c.before[m.UserID]; !was {
			if err := event(everyone, gwire.EventLobbyMemberAdd, m); err != nil {
				return wire.Lobby{}, nil, err
			}
		}
	}
	for _, m := range members {
		if old, was := c.before[m.UserID]; was && !sameMember(old, m) {
			if err := event(everyone, gwire.EventLobbyMemberUpdate, m); err != nil {
				return wire.Lobby{}, nil, err
			}
		}
	}
	return obj, members, nil
}

// sortedMembers iterates a membership map in join order (then user id), so that events come in a
// stable order.
func sortedMembers(m map[uint64]store.LobbyMember) iter.Seq2[uint64, store.LobbyMember] {
	list := slices.Collect(maps.Values(m))
	slices.SortFunc(list, func(a, b store.LobbyMember) int {
		if c := a.JoinedAt.Compare(b.JoinedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.UserID, b.UserID)
	})
	return func(yield func(uint64, store.LobbyMember) bool) {
		for _, v := range list {
			if !yield(v.UserID, v) {
				return
			}
		}
	}
}
