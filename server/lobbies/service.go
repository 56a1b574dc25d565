package lobbies

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gwire "sdkpp/wire/gateway"

	"sdkpp/internal/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/lobbies/internal/groupcommit"
	"sdkpp/server/lobbies/internal/lockpark"
	"sdkpp/server/lobbies/internal/noncemem"
	"sdkpp/server/lobbies/internal/sendq"
	"sdkpp/server/lobbies/internal/sharedread"
	"sdkpp/server/order"
	"sdkpp/server/scopes"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// Limits (anchors: the platform's lobby documentation).
const (
	MaxMetadataChars      = 1000            // lobby and member metadata: keys and values together
	MaxMembersPerLobby    = 1000            // members of one lobby
	MaxLobbiesPerUser     = 100             // lobbies of one game a user may be in
	MaxMembersPerRequest  = 25              // members of POST /lobbies and PATCH, operations of a bulk request (rule LOB-4)
	MaxSecretChars        = 250             // the secret of PUT /lobbies
	MaxAdditionalName     = 80              // a member's additional_name (rule MSG-2)
	MaxNonceChars         = 25              // a message's nonce
	NonceWindow           = 5 * time.Minute // how long an enforced nonce is remembered
	MinIdleTimeoutSeconds = 5               // idle_timeout_seconds
	MaxIdleTimeoutSeconds = 604800          // idle_timeout_seconds: 7 days
	DefaultIdleTimeout    = 5 * time.Minute
	// SecretLifetime is how long a lobby secret can be used to join: afterwards the lobby lives on
	// but PUT /lobbies with that secret makes a new lobby.
	SecretLifetime = 30 * 24 * time.Hour
	// HistoryWindow is how far back GET /lobbies/{id}/messages reaches.
	HistoryWindow      = 72 * time.Hour
	DefaultMessageList = 50  // GET /lobbies/{id}/messages without limit
	MaxMessageList     = 200 // rule LOB-3
	// MaxModerationKeys, MaxModerationKeyChars and MaxModerationValueChars bound moderation
	// metadata (rule MODR-1).
	MaxModerationKeys       = 5
	MaxModerationKeyChars   = 1024
	MaxModerationValueChars = 2000
)

// DefaultNonceMemory bounds, in bytes, the memory of enforced nonces (Service.NonceMemory): half
// of it keeps about 160,000 messages of the usual size whole, the rest the hashes of 2 million
// more, so up to about 7,000 such sends a second over NonceWindow no send queries the store but
// a repeat of a message kept as a hash (package noncemem).
const DefaultNonceMemory = 256 << 20

// Notifier delivers lobby events in real time (the gateway). LobbyEvent is called after the
// change is committed, once per event, in the order the events happened, with the application
// the lobby belongs to (deliver only to sessions identified with a token of that application)
// and the ids of the users who should receive it; data is the event's wire value and must not be
// modified. It is called from request goroutines and from the idle-expiry goroutine, so it must
// be safe for concurrent use, and it must not block: queue and return.
type Notifier interface {
	LobbyEvent(appID uint64, userIDs []uint64, event string, data any)
}

// Stager is a Notifier that keeps a cluster's events in a transactional outbox (package
// store's OutboxRows): stored in the transaction that commits their change, under the change's
// order lock key (package order), and published after the commit, before the lock is released
// (package gateway's Hub.StageEach and Hub.PublishStaged). An event whose node dies between the
// commit and the publish is published by the next holder of the lock. On a cluster
// (Service.Order) the service stages its messages so.
type Stager interface {
	Notifier
	// StageLobbyEvents returns what to store in the outbox for events of the application appID,
	// in their order; nil when they need none (no bus): they then go to the Notifier after
	// the commit.
	StageLobbyEvents(appID uint64, events []Event) [][]byte
	// PublishStaged publishes the events stored in the outbox, data[i] with the id ids[i], in
	// their order (deleted with the lock's release). False when one could not be published: it
	// stays, with those after it, for the next holder, and nothing more may go under the lock.
	PublishStaged(ids []uint64, data [][]byte) bool
}

// Service owns lobbies, their members and their messages, and serves their HTTP routes (see
// Register). Set its fields before Register and Start; do not change them afterwards.
type Service struct {
	Store  store.Store          // lobbies, members, messages, and the webhook queue
	Clock  clock.Clock          // every timestamp and idle expiry reads it
	IDs    *snowflake.Generator // lobby, message and webhook delivery ids
	Logger *slog.Logger         // lobby creation and deletion; store errors
	// Kick wakes the webhook dispatcher after a commit that queued a webhook (may be nil).
	Kick func()
	// ObserveJob, when set, is told of each sweep of the janitor (the idle lobbies deleted,
	// the next expiry read) as job "lobby_expiry", with its duration and error.
	ObserveJob func(job string, took time.Duration, err error)
	// NonceMemory bounds, in bytes, the messages kept in memory for their enforced nonce (0:
	// DefaultNonceMemory).
	NonceMemory int
	// Notifier receives the realtime events; nil means no realtime delivery.
	Notifier Notifier
	// Connected tells whether a user has a live gateway session of an application: a member's
	// connected flag. Nil: no member is connected.
	Connected func(appID, userID uint64) bool
	// Order, when set, is the cluster's order lock (package order): every change of the lobbies
	// and every message of a lobby is made and published under it. Nil for a node alone.
	Order order.Lock
	// Epoch, on PostgreSQL, returns a value that only grows, and moves whenever a user or an
	// application changes or a change that made ids is committed under Order's lock of key
	// (store.DB.SharedEpoch): what sending a message needs of a lobby is kept between messages
	// while it stays. Nil: the store's CacheEpoch is used instead, and on a cluster every group
	// of messages reads its lobby again.
	Epoch func(ctx context.Context, key string) (uint64, error)
	// EpochChecked tells that Epoch is the store's SharedEpoch: on a cluster, a group of
	// messages to a lobby kept since an earlier group is committed without reading the epoch
	// first, its commit checking it instead (store.OutboxRows.EpochKey).
	EpochChecked bool
	// LockLinger, on a cluster, keeps a lobby's order lock this long after a group of its
	// messages, for the node's next group of the lobby (package lockpark); 0 releases it at once.
	LockLinger time.Duration

	// order is held from a transaction's start until its events reach the Notifier, so members
	// get events in commit order: the SDK drops a message that is not newer than the last one it
	// delivered, so an older message dispatched after a newer one would be lost.
	order sync.Mutex
	// hot holds, under order, what sending a message needs of each lobby messages were sent in
	// (see hotLobby); hotStale asks the next sender to empty it.
	hot      map[uint64]*hotLobby
	hotStale atomic.Bool
	// nonces remembers, under order, the messages sent with an enforced nonce since it started
	// (noncesStarted), when the newest stored message with an enforced nonce was sent at
	// storedBefore (storedNonce).
	nonces        *noncemem.Memory
	noncesStarted bool
	storedBefore  time.Time
	// committed is the revision of the last committed change (see tx): a snapshot read after it
	// carries it, so that an SDK can tell the snapshot from older and newer events.
	committed atomic.Uint64
	// writer commits accepted messages; nil until Start.
	writer *groupcommit.Writer
	// epochs shares the reads of Epoch by messages sent at the same time.
	epochs sharedread.Reader[uint64]
	// held are, under order, the messages accepted over a gateway connection whose delivery
	// waits for the rest of the connection's batch (DeliverAccepted); heldN counts them.
	held  []lobbyMessage
	heldN atomic.Int32
	// sends gathers, on a cluster, the messages sent together (cluster.go).
	sends sendq.Queue[*clusterSend]
	// park keeps, with LockLinger, lobbies' order locks between groups; nil without.
	park *lockpark.Park

	startOnce sync.Once
	wake      chan struct{}
	cancel    context.CancelFunc
	done      chan struct{}
}

// Register adds the lobby routes to mux (paths relative to the API base, /api/v10).
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("PUT /lobbies", s.route(byUser, s.createOrJoin))
	mux.HandleFunc("POST /lobbies", s.route(byBot, s.create))
	mux.HandleFunc("GET /lobbies/{lobby_id}", s.route(byEither, s.get))
	mux.HandleFunc("PATCH /lobbies/{lobby_id}", s.route(byBot, s.modify))
	mux.HandleFunc("DELETE /lobbies/{lobby_id}", s.route(byBot, s.delete))
	mux.HandleFunc("PUT /lobbies/{lobby_id}/members/{user_id}", s.route(byBot, s.putMember))
	mux.HandleFunc("DELETE /lobbies/{lobby_id}/members/{user_id}", s.route(byBot, s.removeMember))
	mux.HandleFunc("DELETE /lobbies/{lobby_id}/members/@me", s.route(byUser, s.leave))
	mux.HandleFunc("POST /lobbies/{lobby_id}/members/bulk", s.route(byBot, s.bulk))
	mux.HandleFunc("POST /lobbies/{lobby_id}/messages", s.route(bySender, s.sendMessage))
	mux.HandleFunc("GET /lobbies/{lobby_id}/messages", s.route(byEither, s.listMessages))
	mux.HandleFunc("PUT /lobbies/{lobby_id}/messages/{message_id}/moderation-metadata", s.route(byBot, s.moderate))
	s.registerLinking(mux)
}

// ---- requests

// who says which credentials a route takes.
type who int

const (
	byBot    who = iota // "Authorization: Bot <token>": the application's backend
	byUser              // "Authorization: Bearer <token>" with lobbies.write
	byEither            // either
	// bySender is byUser for sending a message: on PostgreSQL the token may be checked against
	// this node's memo (store.MayBeBehind), which forgets a token another node revoked a
	// notification later, instead of a read of the database per message.
	bySender
)

// request is an authenticated request: who makes it, and the lobby id of its path (0 when the
// path has none).
type request struct {
	*http.Request        // nil over a gateway session (SendOverGateway): the four below carry it
	auth          string // the Authorization header
	lobbyPath     string // the path's lobby_id
	contentType   string // the body's
	body          []byte
	ctx           context.Context
	appID         uint64
	userID        uint64 // 0 for the Bot
	bot           bool
	lobbyID       uint64
	hold          bool // a message's delivery may wait for DeliverAccepted (SendOverGateway)
	// room, when set, is where admit makes the message it accepts (SendOverGateway's, allocated
	// with it); admit uses it once.
	room *acceptedMessage
}

// handler serves a request: it returns the JSON answer (200), or nil for 204, or an error.
type handler func(q *request) (any, error)

// route authenticates (401, or 403 50001 for a Bearer token without lobbies.write), reads the
// lobby id of the path (50035 when malformed), runs h and answers in the platform's shapes.
func (s *Service) route(by who, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := s.serve(r, by, h)
		httpx.Answer(w, r, s.Logger, out, err)
	}
}

func (s *Service) serve(r *http.Request, by who, h handler) (any, error) {
	return s.serveRequest(&request{Request: r, ctx: r.Context(), auth: r.Header.Get("Authorization"),
		lobbyPath: r.PathValue("lobby_id")}, by, h)
}

// serveRequest is serve, whatever carried q.
func (s *Service) serveRequest(q *request, by who, h handler) (any, error) {
	if hdr := q.auth; by == byEither && len(hdr) > 4 && strings.EqualFold(hdr[:4], "Bot ") {
		by = byBot
	}
	auth := token.Auth{Store: s.Store, Clock: s.Clock}
	if by == byBot {
		app, err := auth.BotOf(q.ctx, q.auth)
		if err != nil {
			return nil, err
		}
		q.appID, q.bot = app.ID, true
	} else {
		t, ok := auth.SessionBearer(q.ctx, q.auth) // a gateway session's, read once for it
		if !ok {
			ctx := q.ctx
			if by == bySender {
				ctx = store.MayBeBehind(ctx)
			}
			var err error
			if t, err = auth.BearerOf(ctx, q.auth); err != nil {
				return nil, err
			}
		}
		if !scopes.Has(t.Scopes, scopes.LobbiesWrite) {
			return nil, wire.MissingAccess()
		}
		q.appID, q.userID = t.AppID, t.UserID
	}
	if q.lobbyPath != "" {
		var err error
		if q.lobbyID, err = httpx.ParseID("lobby_id", q.lobbyPath); err != nil {
			return nil, err
		}
	}
	return h(q)
}

// id reads a snowflake path value; a malformed one is a 50035 naming it.
func (q *request) id(name string) (uint64, error) {
	return httpx.PathID(q.Request, name)
}

// ---- transactions and events

// event is a realtime event waiting for the commit.
type event struct {
	app   uint64
	users []uint64
	name  string
	data  any
}

// outbox collects what a transaction wants done once it has committed.
type outbox struct {
	rev      uint64 // the change's revision, stamped on its lobby objects and events
	events   []event
	webhooks bool     // a webhook was queued: kick the dispatcher
	expiry   bool     // a lobby's expiry may now be earlier than the janitor thinks: wake it
	logs     []func() // log lines that are true only once committed
}

func (o *outbox) add(app uint64, users []uint64, name string, data any) {
	if len(users) > 0 {
		o.events = append(o.events, event{app: app, users: users, name: name, data: data})
	}
}

// changesKey is the order lock of every change of the lobbies but their messages.
const changesKey = "lobbies"

// tx runs fn in one transaction and, after the commit, delivers its outbox.
func (s *Service) tx(ctx context.Context, fn func(st store.Store, out *outbox) error) error {
	s.order.Lock()
	defer s.order.Unlock()
	held, err := order.Hold(ctx, s.Order, changesKey, s.IDs, s.Store)
	if err != nil {
		return err
	}
	defer held.Release() // once the events are published
	s.deliverHeld()      // messages accepted before this change are delivered before it
	s.flush()            // and stored before it
	clear(s.hot)         // and what senders remember of any lobby is read again after it
	// Every change gets a revision, in commit order (tx holds order) and above every revision
	// before a restart (snowflakes): the SDK applies a lobby snapshot or event only if it is not
	// older than what it holds, so a join's response that arrives after a newer member event
	// cannot take the lobby back in time.
	rev := s.IDs.Next()
	var out outbox
	err = held.Store.WithTx(ctx, func(st store.Store) error {
		out = outbox{rev: rev}
		return fn(st, &out)
	})
	if err != nil {
		return err
	}
	s.committed.Store(rev)
	for _, log := range out.logs {
		log()
	}
	if out.webhooks && s.Kick != nil {
		s.Kick()
	}
	if out.expiry {
		s.wakeJanitor()
	}
	if s.Notifier != nil {
		for _, e := range out.events {
			s.Notifier.LobbyEvent(e.app, e.users, e.name, withRevision(e.data, rev))
		}
	}
	return nil
}

// live loads lobby id for an application: a lobby that does not exist, is another
// application's or has expired is unknown (404 10031).
func (s *Service) live(ctx context.Context, st store.Store, id, appID uint64, now time.Time) (*store.Lobby, error) {
	l, err := st.GetLobby(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && l.AppID != appID) {
		return nil, wire.UnknownLobby()
	}
	if err != nil {
		return nil, err
	}
	if !now.Before(l.ExpiresAt) {
		// Idle means no activity and no connected member: a connected member keeps it alive.
		alive, err := s.anyConnected(ctx, st, l)
		if err != nil {
			return nil, err
		}
		if !alive {
			return nil, wire.UnknownLobby()
		}
	}
	return l, nil
}

// anyConnected tells whether a member of l has a live gateway session of its application.
func (s *Service) anyConnected(ctx context.Context, st store.Store, l *store.Lobby) (bool, error) {
	if s.Connected == nil {
		return false, nil
	}
	members, err := st.ListLobbyMembers(ctx, l.ID)
	if err != nil {
		return false, err
	}
	for _, m := range members {
		if s.Connected(l.AppID, m.UserID) {
			return true, nil
		}
	}
	return false, nil
}

// touch records activity on l: its idle timer starts again at now.
func touch(l *store.Lobby, now time.Time) {
	l.LastActivityAt, l.ExpiresAt = now, now.Add(l.IdleTimeout)
}

// remove deletes lobby l and tells its members.
func (s *Service) remove(ctx context.Context, st store.Store, out *outbox, l *store.Lobby, why string) error {
	members, err := st.ListLobbyMembers(ctx, l.ID)
	if err != nil {
		return err
	}
	if err := st.DeleteLobby(ctx, l.ID); err != nil {
		return err
	}
	out.add(l.AppID, memberIDs(members), gwire.EventLobbyDelete, wire.LobbyDeleted{ID: wire.Snowflake(l.ID)})
	out.logs = append(out.logs, func() {
		s.Logger.InfoContext(ctx, "lobby deleted", "lobby_id", l.ID, "application_id", l.AppID, "reason", why)
	})
	return nil
}

// ---- idle expiry

// Start runs the goroutine that deletes idle lobbies when their timeout passes (by the service's
// clock). Without it, an idle lobby is still unknown to every request once its time has come; the
// goroutine also deletes its rows and sends LOBBY_DELETE to its members.
func (s *Service) Start() {
	s.startOnce.Do(func() {
		s.wake = make(chan struct{}, 1)
		s.done = make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		s.cancel = cancel
		s.writer = groupcommit.New(s.Store, s.Logger, s.Kick, func() { s.hotStale.Store(true) })
		if s.Order != nil && s.LockLinger > 0 {
			s.park = lockpark.New(s.Clock, s.LockLinger, maxHold)
		}
		go s.janitor(ctx)
	})
}

// Close waits for a cluster's group send under way, then stops the goroutine Start started and
// waits for it.
func (s *Service) Close() {
	s.sends.Wait() // a cluster's group send under way, which may park its lock
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	if s.park != nil {
		s.park.Close()
	}
	s.writer.Close()
}

func (s *Service) wakeJanitor() {
	if s.wake == nil {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Service) janitor(ctx context.Context) {
	defer close(s.done)
	for {
		next, ok, err := time.Time{}, false, error(nil)
		start := time.Now() // the sweep's real duration, for ObserveJob
		if _, err = s.ExpireIdle(ctx); err == nil {
			next, ok, err = s.Store.NextLobbyExpiry(ctx)
		}
		if ctx.Err() == nil && s.ObserveJob != nil {
			s.ObserveJob("lobby_expiry", time.Since(start), err)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.Logger.Error("lobby expiry failed", "err", err)
			next, ok = s.Clock.Now().Add(time.Second), true
		}
		var due <-chan time.Time
		stop := func() {}
		if ok {
			due, stop = clock.At(s.Clock, next)
		}
		select {
		case <-ctx.Done():
			stop()
			return
		case <-s.wake:
		case <-due:
		}
		stop()
	}
}

// ExpireIdle deletes every lobby whose idle timeout has passed, telling its members
// (LOBBY_DELETE), and returns how many it deleted. The janitor calls it; tests may too.
func (s *Service) ExpireIdle(ctx context.Context) (int, error) {
	deleted := 0
	for {
		now := s.Clock.Now()
		due, err := s.Store.ExpiredLobbies(ctx, now, 64)
		if err != nil || len(due) == 0 {
			return deleted, err
		}
		for _, l := range due {
			if now.Before(l.ExpiresAt) {
				// Kept alive by its messages, which do not write their lobby: its stored expiry
				// catches up, once per idle period, and nothing anyone sees changes.
				if err := s.Store.TouchLobby(ctx, l.ID, l.LastActivityAt, l.ExpiresAt); err != nil {
					return deleted, err
				}
				continue
			}
			err := s.tx(ctx, func(st store.Store, out *outbox) error {
				cur, err := st.GetLobby(ctx, l.ID)
				if errors.Is(err, store.ErrNotFound) {
					return nil // gone meanwhile
				}
				if err != nil {
					return err
				}
				if now.Before(cur.ExpiresAt) { // active again meanwhile, maybe by a message
					return st.TouchLobby(ctx, cur.ID, cur.LastActivityAt, cur.ExpiresAt)
				}
				if alive, err := s.anyConnected(ctx, st, cur); err != nil || alive {
					if err == nil { // a connected member keeps it: its idle timer starts again
						touch(cur, now)
						err = st.UpdateLobby(ctx, cur)
					}
					return err
				}
				deleted++
				return s.remove(ctx, st, out, cur, "idle")
			})
			if err != nil {
				return deleted, err
			}
		}
	}
}

// KeepAlive restarts the idle timer of every lobby of the application that the user is in, as
// activity does. The service calls it when a user's gateway connection of the game starts or
// ends, so that a lobby's idle time counts from its last member's disconnection; while a member
// is connected (Connected) the lobby does not expire at all.
func (s *Service) KeepAlive(ctx context.Context, appID, userID uint64) error {
	return s.eachUserLobby(ctx, appID, userID, func(st store.Store, _ *outbox, l *store.Lobby, now time.Time) error {
		touch(l, now)
		return st.UpdateLobby(ctx, l)
	})
}

// eachUserLobby runs fn, in one transaction, on every live lobby of the application that the
// user is in.
func (s *Service) eachUserLobby(ctx context.Context, appID, userID uint64, fn func(st store.Store, out *outbox, l *store.Lobby, now time.Time) error) error {
	return s.tx(ctx, func(st store.Store, out *outbox) error {
		now := s.Clock.Now()
		list, err := st.ListUserLobbies(ctx, appID, userID)
		if err != nil {
			return err
		}
		for i := range list {
			if l := &list[i]; now.Before(l.ExpiresAt) {
				if err := fn(st, out, l, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// withRevision returns a lobby event's data stamped with the revision of the change it reports.
func withRevision(data any, rev uint64) any {
	switch d := data.(type) {
	case wire.Lobby:
		d.Revision = wire.Snowflake(rev)
		return d
	case wire.LobbyMemberEvent:
		d.Revision = wire.Snowflake(rev)
		return d
	case wire.LobbyDeleted:
		d.Revision = wire.Snowflake(rev)
		return d
	}
	return data
}

// CheckMember tells whether userID is a member of lobby lobbyID of application appID now: nil
// when it is, wire.UnknownLobby() (10031) when the lobby does not exist, expired or is another
// application's, wire.MissingAccess() (50001) when the user is not a member, or the store's
// error. Voice calls admit only the lobby's members with it.
func (s *Service) CheckMember(ctx context.Context, appID, lobbyID, userID uint64) error {
	l, err := s.live(ctx, s.Store, lobbyID, appID, s.Clock.Now())
	if err != nil {
		return err
	}
	if _, err := s.Store.GetLobbyMember(ctx, l.ID, userID); errors.Is(err, store.ErrNotFound) {
		return wire.MissingAccess()
	} else if err != nil {
		return fmt.Errorf("lobbies: membership of %d in %d: %w", userID, lobbyID, err)
	}
	return nil
}
