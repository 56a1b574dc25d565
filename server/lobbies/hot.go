package lobbies

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	gwire "sdkpp/wire/gateway"

	"sdkpp/server/lobbies/internal/groupcommit"
	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/server/webhook"
	"sdkpp/wire"
)

// hotLobby is what sending a message in a lobby needs, kept in memory between messages so that
// a message reads nothing from the store: the lobby, its application and its members.
//
// Entries live in Service.hot, under Service.order. Every other change of any lobby goes through
// Service.tx, which empties Service.hot, so an entry is never older than the store; an entry also
// goes when the store's cache epoch moves (a user or an application changed) or its lobby's idle
// time is up. On PostgreSQL, where other nodes change lobbies, users and applications too, the
// epoch is the database's (Service.Epoch), which on a cluster also moves with every change of a
// lobby on any node; its lobby's activity times may then be older than another node's last
// message, which only makes the entry expire early.
type hotLobby struct {
	lobby   store.Lobby // with the activity times of the last message accepted
	app     *store.Application
	members map[uint64]*hotMember
	ids     []uint64 // the members' ids, the recipients of its events
	// twice is ids twice over, ids being its first half: a member's message goes to the window
	// of it that ends with the member (recipients), the same slice for every message.
	twice []uint64
	epoch uint64 // the epoch it was loaded at (hotEntry)
}

// hotMember is a member of a hot lobby.
type hotMember struct {
	additionalName string
	author         *store.User // read at the member's first message; nil before
	// object is the author object of the member's messages (messageObject's), made at its
	// first message and shared by the next ones: nil before.
	object *wire.User
	gone   bool // the user no longer exists
	at     int  // its place in hotLobby.ids
}

// maxHotLobbies bounds Service.hot; when it is full it starts again empty.
const maxHotLobbies = 10000

// hotEntry returns the hot entry of the request's lobby, loading it when needed: the errors of
// live (unknown, expired lobby) for a lobby the request may not see. An entry is kept while
// epoch, read before the call, is not newer than the one it was loaded at (epochs only grow):
// Service.Epoch when set, else the store's CacheEpoch. Call with s.order held.
func (s *Service) hotEntry(ctx context.Context, q *request, now time.Time, epoch uint64) (*hotLobby, error) {
	if s.hotStale.Swap(false) { // a commit failed: what was accepted may not be stored
		clear(s.hot)
		s.forgetNonces()
	}
	if h := s.hot[q.lobbyID]; h != nil && h.epoch >= epoch && now.Before(h.lobby.ExpiresAt) {
		if h.lobby.AppID != q.appID {
			return nil, wire.UnknownLobby()
		}
		return h, nil
	}
	delete(s.hot, q.lobbyID)
	s.flush() // the store must hold every accepted message and activity time
	// The application (the lobby's, which live checks is the request's) and the members are read
	// beside the lobby, and on a cluster the sender too: s.order is held for one read's wait
	// instead of three or four.
	var (
		wg                            sync.WaitGroup
		app                           *store.Application
		members                       []store.LobbyMember
		author                        *store.User
		appErr, membersErr, authorErr error
	)
	wg.Go(func() { app, appErr = s.Store.GetApplication(ctx, q.appID) })
	wg.Go(func() { members, membersErr = s.Store.ListLobbyMembers(ctx, q.lobbyID) })
	prefetch := s.Order != nil && q.userID != 0
	if prefetch {
		wg.Go(func() { author, authorErr = s.Store.GetUser(ctx, q.userID) })
	}
	l, err := s.live(ctx, s.Store, q.lobbyID, q.appID, now)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if err := cmp.Or(appErr, membersErr); err != nil {
		return nil, err
	}
	h := newHotLobby(*l, app, members, epoch)
	if m := h.members[q.userID]; prefetch && m != nil {
		switch {
		case errors.Is(authorErr, store.ErrNotFound):
			m.gone = true
		case authorErr == nil:
			m.author = author
		} // another error: admit reads the user again
	}
	if s.hot == nil || len(s.hot) >= maxHotLobbies {
		s.hot = make(map[uint64]*hotLobby)
	}
	s.hot[l.ID] = h
	return h, nil
}

// newHotLobby is the hot entry of lobby l, of the application app, with its members, loaded at
// epoch.
func newHotLobby(l store.Lobby, app *store.Application, members []store.LobbyMember, epoch uint64) *hotLobby {
	h := &hotLobby{lobby: l, app: app, members: make(map[uint64]*hotMember, len(members)), epoch: epoch}
	h.twice = make([]uint64, 2*len(members))
	for i, m := range members {
		h.twice[i], h.twice[len(members)+i] = m.UserID, m.UserID
		h.members[m.UserID] = &hotMember{additionalName: m.AdditionalName, at: i}
	}
	h.ids = h.twice[:len(members):len(members)]
	return h
}

// acceptMessage checks and accepts a member's message in the request's lobby: it gives the
// message its id, delivers LOBBY_MESSAGE_CREATE to the members, and returns the message's wire
// form, encoded once for the members, the webhook and the sender's answer, and the pending
// message whose commit the answer waits for (awaitCommit; nil when it is committed). With a
// running writer the members get the message before the commit; without one (the service was
// not started, or is closing) the message is committed first. On a cluster it goes through acceptClustered.
func (s *Service) acceptMessage(q *request, req messageRequest) (enc wire.Encoded, wait *pending, err error) {
	if s.Order != nil {
		return s.acceptClustered(q, req)
	}
	var epoch uint64
	if s.Epoch != nil { // read before the turn, which it need not hold up; shared (epochs)
		// A node alone holds no order lock: the store may answer from its memo, a notification
		// behind another writer of the database (store.MayBeBehind).
		if epoch, err = s.epochs.Read(store.MayBeBehind(q.ctx), s.readEpoch); err != nil {
			return nil, nil, err
		}
	}
	s.order.Lock()
	defer s.order.Unlock()
	if s.Epoch == nil {
		epoch = s.Store.CacheEpoch()
	}
	now := s.Clock.Now()
	h, err := s.hotEntry(q.ctx, q, now, epoch)
	if err != nil {
		return nil, nil, err
	}
	enc, p, err := s.admit(q, req, h, now)
	if err != nil {
		return nil, nil, err
	}
	if p == nil { // a repeated send: answered once stored, as the first send was
		s.flush()
		return enc, nil, nil
	}
	if s.writer != nil && s.writer.Enqueue(p) {
		// Delivered before the commit, which the sender's answer waits for; over a gateway
		// connection with the messages accepted with it (DeliverAccepted).
		if q.hold {
			s.held = append(s.held, lobbyMessage{h: h, enc: enc, author: q.userID})
			s.heldN.Store(int32(len(s.held)))
		} else {
			s.deliverHeld()
			s.deliver(h, enc, q.userID)
		}
		return enc, p, nil
	}
	if err := s.commitNow(s.Store, h, nil, p); err != nil {
		return nil, nil, err
	}
	s.deliverHeld()
	s.deliver(h, enc, q.userID)
	return enc, nil, nil
}

// DeliverAccepted delivers the messages accepted over gateway connections whose delivery was
// held (SendOverGateway), in the order they were accepted: the gateway calls it once it has
// accepted what a connection sent together, before it takes their answers. The messages of one
// application go in one Notifier call when it is a BatchNotifier, so that a member's connection is
// written once for all of them.
func (s *Service) DeliverAccepted() {
	if s.heldN.Load() == 0 {
		return
	}
	if s.writer != nil {
		// Their commit's statement leaves first when they are a group: the database executes
		// it while they are delivered (groupcommit.Writer.StartGroup).
		s.writer.StartGroup()
	}
	s.order.Lock()
	defer s.order.Unlock()
	s.deliverHeld()
}

// deliverHeld is DeliverAccepted with s.order held.
func (s *Service) deliverHeld() {
	held := s.held
	if len(held) == 0 {
		return
	}
	s.held = held[:0] // its array is appended to again under s.order, once these are delivered
	s.heldN.Store(0)
	defer clear(held)
	ms := held
	bn, ok := s.Notifier.(BatchNotifier)
	for len(ms) > 0 {
		n := 1 // a run of messages of one application
		for n < len(ms) && ms[n].h.lobby.AppID == ms[0].h.lobby.AppID {
			n++
		}
		if !ok || n == 1 {
			s.deliver(ms[0].h, ms[0].enc, ms[0].author)
			n = 1
		} else if events := lobbyEvents(ms[:n]); len(events) > 0 {
			bn.LobbyEvents(ms[0].h.lobby.AppID, events)
		}
		ms = ms[n:]
	}
}

// admit checks a member's message against its lobby's hot entry h and accepts it: it gives the
// message its id and its author, records the lobby's activity in h, and returns the message's
// wire form and what commits it. A send repeated with an enforced nonce is answered with the
// first message's wire form and no pending. Call with s.order held.
func (s *Service) admit(q *request, req messageRequest, h *hotLobby, now time.Time) (wire.Encoded, *pending, error) {
	member := h.members[q.userID]
	if member == nil {
		return nil, nil, wire.MissingAccess()
	}
	key := nonceKey{Lobby: h.lobby.ID, Author: q.userID, Nonce: req.nonce}
	if req.enforceNonce {
		if enc, ok := s.nonceMemory().Find(key, now); ok {
			return enc, nil, nil
		}
		enc, ok, err := s.storedNonce(q, member, key, now)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return enc, nil, nil
		}
	}
	if member.author == nil && !member.gone {
		u, err := s.Store.GetUser(q.ctx, q.userID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			member.gone = true
		case err != nil:
			return nil, nil, err
		default:
			member.author = u
		}
	}
	a := q.room // the request's room for it, used once (a retry allocates another)
	if q.room = nil; a == nil {
		a = new(acceptedMessage)
	}
	a.msg = store.LobbyMessage{ID: s.IDs.Next(), LobbyID: h.lobby.ID, AppID: h.lobby.AppID, AuthorID: q.userID,
		Content: req.content, Metadata: orNil(req.meta.v), Flags: int(req.flags.v),
		AdditionalName: member.additionalName, CreatedAt: now}
	m := &a.msg
	if req.enforceNonce {
		m.Nonce = req.nonce
	}
	if member.object == nil {
		o := goneAuthor(q.userID)
		if member.author != nil {
			o = users.Object(member.author, false)
		}
		member.object = &o
	}
	obj := messageObject(m, nil)
	obj.Author = *member.object
	b := obj.AppendJSON(make([]byte, 0, 640+len(m.Content))) // one allocation for most messages
	enc := b[:len(b):len(b)]                                 // shared by its readers: an append copies
	touch(&h.lobby, now)
	p, err := s.pendingOf(&a.pending, m, h, enc, now)
	if err != nil {
		return nil, nil, err
	}
	if req.enforceNonce {
		s.nonceMemory().Add(key, enc, now) // Find missed it above; forgotten again if the commit fails
	}
	return enc, p, nil
}

// lobbyKey is the order lock of a lobby's events (package order).
func lobbyKey(lobbyID uint64) string { return "lobby:" + strconv.FormatUint(lobbyID, 10) }

// readEpoch reads Epoch of the lobbies' changes.
func (s *Service) readEpoch(ctx context.Context) (uint64, error) { return s.Epoch(ctx, changesKey) }

// pending is an accepted message waiting for its commit (package groupcommit).
type pending = groupcommit.Pending

// awaitCommit waits for the commit of p, a message that acceptMessage accepted, and returns its
// result; nil p is a message already stored.
func (s *Service) awaitCommit(p *pending) error {
	if p == nil {
		return nil
	}
	return s.writer.Await(p)
}

// acceptedMessage is a message admit accepts and its pending, in one allocation.
type acceptedMessage struct {
	msg     store.LobbyMessage
	pending pending
}

// pendingOf is the accepted message m, as the writer commits it, made in p: with the
// application's webhook row. The message is its lobby's latest activity; its commit does not
// write the lobby.
func (s *Service) pendingOf(p *pending, m *store.LobbyMessage, h *hotLobby, obj wire.Encoded, now time.Time) (*pending, error) {
	*p = pending{Msg: m}
	if h.app.WebhookURL == "" { // no row, and no allocation for obj as Delivery's any
		return p, nil
	}
	hook, err := webhook.Delivery(s.IDs, now, h.app, wire.EventLobbyMessageCreate, obj)
	if err != nil {
		return nil, err
	}
	p.Hook = hook
	return p, nil
}

// commitNow commits messages of h's lobby without the writer, on st (s.Store, or on a cluster
// the lobby's order lock's), in one transaction with the outbox's events out (nil: none); a
// failure forgets the lobby's hot entry and the nonces, which may hold what was not stored.
func (s *Service) commitNow(st store.Store, h *hotLobby, out *store.OutboxRows, ps ...*pending) error {
	err := groupcommit.Commit(st, ps, out)
	if err != nil {
		delete(s.hot, h.lobby.ID)
		s.forgetNonces()
		return err
	}
	if groupcommit.HasHook(ps) && s.Kick != nil {
		s.Kick()
	}
	return nil
}

// deliver hands LOBBY_MESSAGE_CREATE to the Notifier for the lobby's members.
func (s *Service) deliver(h *hotLobby, obj wire.Encoded, author uint64) {
	if s.Notifier == nil || len(h.ids) == 0 {
		return
	}
	s.Notifier.LobbyEvent(h.lobby.AppID, recipients(h, author), gwire.EventLobbyMessageCreate, obj)
}

// recipients are the members of h, the author last: the others are waiting for its message,
// where the author's client already knows it. They are the members that follow the author in
// h.ids, then those before it, then the author: a window of h.twice, made once with the hot
// entry, which every message of the author shares (no copy per message). They must not be
// modified (their capacity ends with them, so that an append copies).
func recipients(h *hotLobby, author uint64) []uint64 {
	m := h.members[author]
	if m == nil || len(h.twice) != 2*len(h.ids) || h.ids[m.at] != author {
		return h.ids
	}
	end := m.at + 1 + len(h.ids)
	return h.twice[m.at+1 : end : end]
}

// flush waits until the writer has committed every message accepted so far.
func (s *Service) flush() {
	if s.writer != nil {
		s.writer.Flush()
	}
}
