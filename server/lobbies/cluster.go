package lobbies

import (
	"context"
	"errors"
	"sync"
	"time"

	gwire "sdkpp/wire/gateway"

	"sdkpp/server/lobbies/internal/sendtrace"
	"sdkpp/server/order"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// On a cluster a lobby message is stored before anyone hears of it (a node that dies between
// the two must not have published a message that was never stored), and it is stored and
// published under its lobby's order lock, so that every node reads a lobby's messages in commit
// order. Each lock costs round trips to PostgreSQL, and each publish one to the bus: taken one
// message at a time, they bounded a lobby to a few hundred messages a second. So the messages
// that arrive while one group is being sent wait for it and then go as the next group: one
// transaction and one publish of several messages, in id order, and one hold of the lock for
// several groups in a row. A node keeps the lock a moment after its last group
// (Service.LockLinger), and commits a group to a lobby it keeps without reading the shared epoch
// first: the commit checks it (Service.EpochChecked).

// clusterSend is a message waiting on a cluster for its group, and then its result.
type clusterSend struct {
	q   *request
	req messageRequest

	// Set by the group's sender, read once done.
	enc             wire.Encoded
	err             error
	*sendtrace.Send // its timeline, with SDKPP_SEND_TRACE set
}

// Key is the message's lobby: its group's (sendq.Keyed).
func (c *clusterSend) Key() uint64 { return c.q.lobbyID }

// acceptClustered is acceptMessage on a cluster: it returns once the message is stored (with the
// messages sent beside it), its publish then under way, or has failed. A stored message reaches
// the bus: its node publishes it, or, should the node die first, the next holder of its lobby's
// order lock (or the relay job) does from the outbox.
func (s *Service) acceptClustered(q *request, req messageRequest) (wire.Encoded, *pending, error) {
	c := &clusterSend{q: q, req: req, Send: sendtrace.Default.Send()}
	s.sends.Send(c, s.sendGroups)
	if c.err != nil {
		return nil, nil, c.err
	}
	return c.enc, nil, nil // stored
}

// sendGroups sends the messages of each lobby in batch together, the lobbies one after the
// other in the order of their first message.
func (s *Service) sendGroups(batch []*clusterSend) {
	s.order.Lock()
	defer s.order.Unlock()
	for len(batch) > 0 {
		id := batch[0].q.lobbyID
		var group, rest []*clusterSend
		for _, c := range batch {
			if c.q.lobbyID == id {
				group = append(group, c)
			} else {
				rest = append(rest, c)
			}
		}
		s.sendLobby(group)
		batch = rest
	}
}

// maxGroupsPerHold bounds the groups one hold of a lobby's order lock sends, so that the other
// nodes sending to the lobby get their turns; maxHold bounds, with Service.LockLinger, how long
// a hold kept between groups lasts (package lockpark).
const (
	maxGroupsPerHold = 16
	maxHold          = 20 * time.Millisecond
)

// maxGather bounds how long the next group of a lobby waits for the messages of the senders of
// the last one (sendLobby), who were just answered; it waits no longer than the last one took
// to be committed and published either, so that a message waits at most about one group's
// send more than it did, and only when several senders send to the lobby at once.
const maxGather = 2 * time.Millisecond

// gather is how many messages of a lobby the next group waits for, after a group of sent
// messages, next of them already taken: as many, when several senders send at once.
func gather(sent, next int) int {
	if sent < 2 {
		return 0
	}
	return sent - next
}

// maxEpochTries bounds the tries of a group whose commit found the shared epoch moved: the last
// one is committed without the check.
const maxEpochTries = 3

// sendLobby sends group, messages of one lobby, under the lobby's order lock, and then, while
// the lock is held, the lobby's messages that arrived meanwhile as the next groups: the lock's
// release and next hold are saved. A group's senders are answered once it is committed (the one
// whose request started the send too: it runs on the send queue's goroutine), and what they send
// while it is published joins the next group (of a lobby kept, whose commit checks the epoch). With Service.LockLinger the lock is then kept a moment for the node's next group
// of the lobby. Call with s.order held.
func (s *Service) sendLobby(group []*clusterSend) {
	sq := &s.sends
	// The groups' work outlives any one sender's request.
	ctx := context.WithoutCancel(group[0].q.ctx)
	id := group[0].q.lobbyID
	// The epoch moves when any node changes a lobby (under another key), a user or an
	// application. A group of a lobby this node keeps is checked against the epoch it was read
	// under by its commit (Service.EpochChecked); for any other the epoch is read beside the
	// lock's wait, which it need not follow, and for the next group beside this one's publish,
	// once that group is taken: every change committed before one of its messages arrived is
	// read.
	var (
		epoch    uint64
		epochErr error
		wg       sync.WaitGroup
		held     order.Held
		since    time.Time
		kept     bool
	)
	read := s.mustRead(id)
	if s.park != nil {
		held, since, kept = s.park.Take(id)
	}
	if read {
		wg.Go(func() { epoch, epochErr = s.Epoch(ctx, changesKey) })
	}
	if !kept {
		var err error
		since = s.Clock.Now()
		held, err = order.Hold(ctx, s.Order, lobbyKey(id), s.IDs, s.Store)
		if err != nil {
			wg.Wait()
			failAll(group, err)
			sq.Finish(group)
			return
		}
	}
	wg.Wait()
	park := s.park != nil
	defer func() { // once the last group is published
		if park {
			s.park.Put(id, since, held)
		} else {
			held.Release()
		}
	}()
	for n := 1; group != nil; n++ {
		sendtrace.Group(sendtrace.Default, group, n, kept)
		var next []*clusterSend
		nextEpoch, nextErr, nextRead, taken := epoch, error(nil), false, false
		take := func() { // answers, and the next group and its epoch, once this one is committed
			// A committed message is the bus's: published now, or by the next holder of the lock
			// (or the relay) if this node dies first. Its sender need not wait for the publish,
			// and its next message can then join the next group while this one is published.
			sq.Finish(group)
			if taken, next = true, sq.Take(id); n < maxGroupsPerHold && len(next) > 0 && s.mustRead(id) {
				nextRead = true
				wg.Go(func() { nextEpoch, nextErr = s.Epoch(ctx, changesKey) })
			}
		}
		published, began := true, s.Clock.Now()
		if epochErr != nil {
			failAll(group, epochErr)
		} else {
			published = s.sendGroup(ctx, held.Store, group, epoch, read, take)
		}
		if !taken {
			take()
		}
		sendtrace.Mark(sendtrace.Default, group, sendtrace.Published)
		wg.Wait()
		if !published || n == maxGroupsPerHold {
			sq.PutBack(next) // the next holder publishes first what this one could not
			park = park && published
			return
		}
		if !nextRead && !s.mustRead(id) {
			// What arrived during the publish (the senders just answered, mostly) joins the
			// next group: its commit checks the kept lobby's epoch, as the group's own does.
			// A group of several senders waits a moment for as many as it had (gather):
			// they were just answered and send again, and a commit and a publish cost about
			// as much for one message as for several.
			next = append(next, sq.TakeAtLeast(id, gather(len(group), len(next)), min(maxGather, s.Clock.Now().Sub(began)))...)
		}
		group, epoch, epochErr, read = next, nextEpoch, nextErr, nextRead
	}
}

// mustRead tells whether a group of the lobby id must read the epoch before it is admitted:
// unless the lobby is kept (hot) and its commit checks the epoch. Call with s.order held.
func (s *Service) mustRead(id uint64) bool {
	if s.Epoch == nil {
		return false // every group reads its lobby again (sendGroup)
	}
	h := s.hot[id]
	return !s.EpochChecked || h == nil || !s.Clock.Now().Before(h.lobby.ExpiresAt)
}

// failAll fails every message of group with err.
func failAll(group []*clusterSend, err error) {
	for _, c := range group {
		c.enc, c.err = nil, err
	}
}

// sendGroup stores and publishes messages of one lobby, whose order lock is held: each is
// checked and accepted as on a node alone, then all of them are committed in one transaction on
// the lock's store st and published together in id order; committed is called between. A failed commit fails every
// message of the group. With a Stager, their events are stored in the outbox in that
// transaction and published from it; it returns false when they could not be published (they
// wait for the next holder of the lock). epoch is the epoch read for the group when read is
// set; else the lobby's kept entry is used, and its commit checks that the epoch it was read
// under has not moved. A group whose commit finds it moved, or that a kept entry refused
// something of, is tried again with the epoch read. Call with s.order held.
func (s *Service) sendGroup(ctx context.Context, st store.Store, group []*clusterSend, epoch uint64, read bool, committed func()) bool {
	for try := 1; ; try++ {
		published, moved := s.tryGroup(ctx, st, group, epoch, read, try < maxEpochTries, committed)
		if !moved {
			return published
		}
		var err error
		if epoch, err = s.Epoch(ctx, changesKey); err != nil {
			failAll(group, err)
			return true
		}
		read = true
		for _, c := range group {
			c.enc, c.err = nil, nil
		}
	}
}

// tryGroup is a try of sendGroup, whose commit checks the epoch when check is set (the last try,
// with the epoch and the lobby read after the messages arrived, needs no check): moved tells that
// it stored nothing, and why: the epoch moved, or, with the epoch not read, a message was refused.
func (s *Service) tryGroup(ctx context.Context, st store.Store, group []*clusterSend, epoch uint64, read, check bool, committed func()) (published, moved bool) {
	if s.Epoch == nil {
		clear(s.hot) // other nodes change lobbies: read the lobby again
	}
	now := s.Clock.Now()
	var (
		batch []*pending
		out   []lobbyMessage
	)
	refused := false
	for _, c := range group {
		c.q.ctx = ctx
		var h *hotLobby
		if h, c.err = s.hotEntry(ctx, c.q, now, epoch); c.err != nil {
			refused = true
			continue
		}
		var p *pending
		if c.enc, p, c.err = s.admit(c.q, c.req, h, now); c.err != nil || p == nil {
			refused = refused || c.err != nil
			continue // refused, or a repeated send (answered with the group's commit)
		}
		batch = append(batch, p)
		out = append(out, lobbyMessage{h: h, enc: c.enc, author: c.q.userID})
	}
	if refused && !read && s.Epoch != nil { // perhaps by what the lobby's kept entry missed
		delete(s.hot, group[0].q.lobbyID)
		s.forgetNonces() // what was accepted is not stored
		return true, true
	}
	if len(batch) == 0 {
		return true, false
	}
	h := out[len(out)-1].h
	stager, staging := s.Notifier.(Stager)
	var staged *store.OutboxRows
	if staging || s.EpochChecked && check {
		staged = &store.OutboxRows{Key: lobbyKey(h.lobby.ID), At: now}
		if staging {
			staged.Data = stager.StageLobbyEvents(h.lobby.AppID, lobbyEvents(out))
		}
		if s.EpochChecked && check {
			staged.EpochKey, staged.Epoch = changesKey, h.epoch
		}
	}
	sendtrace.Mark(sendtrace.Default, group, sendtrace.CommitStart)
	if err := s.commitNow(st, h, staged, batch...); err != nil {
		if errors.Is(err, store.ErrEpochMoved) {
			return true, true
		}
		for _, c := range group {
			if c.err == nil {
				c.enc, c.err = nil, err
			}
		}
		return true, false
	}
	if !staging { // delivered before the answers, as on a node alone
		s.deliverAll(out)
		committed()
		return true, false
	}
	committed()
	if len(staged.Data) == 0 {
		return true, false
	}
	return stager.PublishStaged(staged.IDs, staged.Data), false
}

// lobbyMessage is an accepted message on its way to the members.
type lobbyMessage struct {
	h      *hotLobby
	enc    wire.Encoded
	author uint64
}

// BatchNotifier is a Notifier that also takes several events of one application at once,
// handled as LobbyEvent each, in their order (on a cluster, published together).
type BatchNotifier interface {
	Notifier
	LobbyEvents(appID uint64, events []Event)
}

// Event is one event of BatchNotifier.LobbyEvents.
type Event struct {
	UserIDs []uint64
	Name    string
	Data    any
}

// deliverAll hands LOBBY_MESSAGE_CREATE of each message, in order, to the Notifier: together
// when it is a BatchNotifier.
func (s *Service) deliverAll(ms []lobbyMessage) {
	bn, ok := s.Notifier.(BatchNotifier)
	if !ok || len(ms) == 1 {
		for _, m := range ms {
			s.deliver(m.h, m.enc, m.author)
		}
		return
	}
	if events := lobbyEvents(ms); len(events) > 0 {
		bn.LobbyEvents(ms[0].h.lobby.AppID, events) // one lobby's messages: one application
	}
}

// lobbyEvents are the LOBBY_MESSAGE_CREATE events of messages of one lobby, in order, but for
// a lobby without members.
func lobbyEvents(ms []lobbyMessage) []Event {
	events := make([]Event, 0, len(ms))
	for _, m := range ms {
		if len(m.h.ids) > 0 {
			events = append(events, Event{UserIDs: recipients(m.h, m.author), Name: gwire.EventLobbyMessageCreate, Data: m.enc})
		}
	}
	return events
}
