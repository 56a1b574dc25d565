package lobbies

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strconv"
	"time"

	gwire "sdkpp/wire/gateway"

	"sdkpp/server/httpx"
	"sdkpp/server/lobbies/internal/stamp"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/wire"
)

// orNil normalizes an empty map to nil (stored and sent as "no metadata").
func orNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// idleTimeout is the requested idle timeout, or the default.
func idleTimeout(o opt[int64]) time.Duration {
	if o.set {
		return time.Duration(o.v) * time.Second
	}
	return DefaultIdleTimeout
}

// inLobby runs fn in a transaction on the request's lobby, which must be a live lobby of the
// caller's application (else 404 10031).
func (s *Service) inLobby(q *request, fn func(st store.Store, out *outbox, l *store.Lobby, now time.Time) error) error {
	return s.tx(q.ctx, func(st store.Store, out *outbox) error {
		now := s.Clock.Now()
		l, err := s.live(q.ctx, st, q.lobbyID, q.appID, now)
		if err != nil {
			return err
		}
		return fn(st, out, l, now)
	})
}

// editLobby runs fn on a change of the request's lobby in a transaction, commits the change and
// returns the lobby's wire form.
func (s *Service) editLobby(q *request, fn func(*change) error) (wire.Lobby, error) {
	var obj wire.Lobby
	err := s.inLobby(q, func(st store.Store, out *outbox, l *store.Lobby, now time.Time) error {
		ch, err := s.edit(q.ctx, st, l, now)
		if err != nil {
			return err
		}
		if err := fn(ch); err != nil {
			return err
		}
		obj, _, err = ch.commit(q.ctx, out)
		return err
	})
	return obj, err
}

// createOrJoin serves PUT /lobbies (rule LOB-1): the caller joins the application's lobby with
// that secret, which is created first when there is none (or its secret expired, or it expired).
func (s *Service) createOrJoin(q *request) (any, error) {
	req, err := parseJoin(q.Request)
	if err != nil {
		return nil, err
	}
	var obj wire.Lobby
	err = s.tx(q.ctx, func(st store.Store, out *outbox) error {
		now := s.Clock.Now()
		hash := secret.Hash(req.secret)
		l, err := st.GetLobbyBySecret(q.ctx, q.appID, hash)
		switch {
		case errors.Is(err, store.ErrNotFound):
			l = nil
		case err != nil:
			return err
		case !now.Before(l.ExpiresAt):
			if err := s.remove(q.ctx, st, out, l, "idle"); err != nil {
				return err
			}
			l = nil
		case !now.Before(l.SecretExpiresAt):
			l.SecretHash = nil // the lobby lives on; the secret now makes a new one
			if err := st.UpdateLobby(q.ctx, l); err != nil {
				return err
			}
			l = nil
		}
		var ch *change
		if l == nil {
			l = &store.Lobby{ID: s.IDs.Next(), AppID: q.appID, SecretHash: hash, SecretExpiresAt: now.Add(SecretLifetime),
				FromSecret: true, Metadata: orNil(req.lobbyMeta.v), IdleTimeout: idleTimeout(req.idle), CreatedAt: now}
			if ch, err = s.newLobby(q.ctx, st, out, l, now); err != nil {
				return err
			}
		} else {
			if ch, err = s.edit(q.ctx, st, l, now); err != nil {
				return err
			}
			if req.lobbyMeta.set && !maps.Equal(l.Metadata, orNil(req.lobbyMeta.v)) {
				l.Metadata, ch.updated = orNil(req.lobbyMeta.v), true
			}
		}
		if _, _, err := ch.upsert(q.ctx, memberInput{id: q.userID, metadata: req.memberMeta}, true); err != nil {
			return err
		}
		obj, _, err = ch.commit(q.ctx, out)
		return err
	})
	return obj, err
}

// create serves POST /lobbies: the application's backend makes a lobby, with up to 25 members.
// Users already in MaxLobbiesPerUser lobbies are left out, as the platform does.
func (s *Service) create(q *request) (any, error) {
	req, err := parseLobby(q.Request)
	if err != nil {
		return nil, err
	}
	var obj wire.Lobby
	err = s.tx(q.ctx, func(st store.Store, out *outbox) error {
		now := s.Clock.Now()
		l := &store.Lobby{ID: s.IDs.Next(), AppID: q.appID, Metadata: orNil(req.meta.v), IdleTimeout: idleTimeout(req.idle), CreatedAt: now}
		ch, err := s.newLobby(q.ctx, st, out, l, now)
		if err != nil {
			return err
		}
		for _, in := range req.members.v {
			if _, _, err := ch.upsert(q.ctx, in, false); err != nil {
				return err
			}
		}
		obj, _, err = ch.commit(q.ctx, out)
		return err
	})
	return obj, err
}

// get serves GET /lobbies/{lobby_id} to a member (Bearer) or the application (Bot).
func (s *Service) get(q *request) (any, error) {
	s.flush()                 // its last message id
	rev := s.committed.Load() // read before the lobby: the snapshot holds at least this revision
	l, err := s.live(q.ctx, s.Store, q.lobbyID, q.appID, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	members, err := s.Store.ListLobbyMembers(q.ctx, l.ID)
	if err != nil {
		return nil, err
	}
	if !q.bot && !isMember(members, q.userID) {
		return nil, wire.MissingAccess()
	}
	obj, err := s.lobbyObject(q.ctx, s.Store, l, members)
	obj.Revision = wire.Snowflake(rev)
	return obj, err
}

// isMember tells whether userID is among members.
func isMember(members []store.LobbyMember, userID uint64) bool {
	for _, m := range members {
		if m.UserID == userID {
			return true
		}
	}
	return false
}

// modify serves PATCH /lobbies/{lobby_id}: metadata (replaced; null clears it),
// idle_timeout_seconds, and members (the new member list: members not in it are removed).
func (s *Service) modify(q *request) (any, error) {
	req, err := parseLobby(q.Request)
	if err != nil {
		return nil, err
	}
	return s.editLobby(q, func(ch *change) error {
		l := ch.lobby
		if req.meta.set && !maps.Equal(l.Metadata, orNil(req.meta.v)) {
			l.Metadata, ch.updated = orNil(req.meta.v), true
		}
		if d := idleTimeout(req.idle); req.idle.set && d != l.IdleTimeout {
			l.IdleTimeout, ch.updated = d, true
		}
		if !req.members.set || req.members.null {
			return nil
		}
		keep := map[uint64]bool{}
		for _, in := range req.members.v {
			keep[in.id] = true
			if _, _, err := ch.upsert(q.ctx, in, false); err != nil {
				return err
			}
		}
		for uid := range ch.before {
			if !keep[uid] {
				if err := ch.drop(q.ctx, uid); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// delete serves DELETE /lobbies/{lobby_id}: 204, also when the lobby is already gone.
func (s *Service) delete(q *request) (any, error) {
	return nil, s.tx(q.ctx, func(st store.Store, out *outbox) error {
		l, err := st.GetLobby(q.ctx, q.lobbyID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && l.AppID != q.appID) {
			return nil
		}
		if err != nil {
			return err
		}
		return s.remove(q.ctx, st, out, l, "deleted by the application")
	})
}

// putMember serves PUT /lobbies/{lobby_id}/members/{user_id}: adds the user or updates the
// membership (metadata, flags, additional_name: rule MSG-2) and returns the member object.
func (s *Service) putMember(q *request) (any, error) {
	uid, err := q.id("user_id")
	if err != nil {
		return nil, err
	}
	raw, err := readBody(q.Request)
	if err != nil {
		return nil, err
	}
	in, err := parseMember(raw, "", memberInPath)
	if err != nil {
		return nil, err
	}
	in.id = uid
	var obj wire.LobbyMember
	_, err = s.editLobby(q, func(ch *change) error {
		m, _, err := ch.upsert(q.ctx, in, true)
		if err == nil {
			obj, err = s.memberObject(q.ctx, ch.st, q.appID, m)
		}
		return err
	})
	return obj, err
}

// removeMember serves DELETE /lobbies/{lobby_id}/members/{user_id} (204, also when the user was
// not a member).
func (s *Service) removeMember(q *request) (any, error) {
	uid, err := q.id("user_id")
	if err != nil {
		return nil, err
	}
	_, err = s.editLobby(q, func(ch *change) error { return ch.drop(q.ctx, uid) })
	return nil, err
}

// leave serves DELETE /lobbies/{lobby_id}/members/@me: the caller leaves a lobby made by PUT
// /lobbies (204, also when not a member); lobbies made by the application's backend are left
// only through it (403 50013).
func (s *Service) leave(q *request) (any, error) {
	_, err := s.editLobby(q, func(ch *change) error {
		if _, ok := ch.before[q.userID]; ok && !ch.lobby.FromSecret {
			return wire.MissingPermissions()
		}
		return ch.drop(q.ctx, q.userID)
	})
	return nil, err
}

// bulk serves POST /lobbies/{lobby_id}/members/bulk (rule LOB-4): 1 to 25 operations applied
// together or not at all; returns the upserted members.
func (s *Service) bulk(q *request) (any, error) {
	raw, err := readBody(q.Request)
	if err != nil {
		return nil, err
	}
	ops, err := parseMemberList(raw, "", 1, memberInBulk)
	if err != nil {
		return nil, err
	}
	upserted := []wire.LobbyMember{}
	_, err = s.editLobby(q, func(ch *change) error {
		var order []uint64
		for _, in := range ops {
			if in.remove {
				if err := ch.drop(q.ctx, in.id); err != nil {
					return err
				}
				continue
			}
			_, added, err := ch.upsert(q.ctx, in, false)
			if err != nil {
				return err
			}
			if added {
				order = append(order, in.id)
			}
		}
		seen := map[uint64]bool{}
		for _, uid := range order {
			if m, ok := ch.after[uid]; ok && !seen[uid] {
				seen[uid] = true
				mo, err := s.memberObject(q.ctx, ch.st, q.appID, m)
				if err != nil {
					return err
				}
				upserted = append(upserted, mo)
			}
		}
		return nil
	})
	return upserted, err
}

// messageObject is the wire form of a lobby message; author may be nil.
func messageObject(m *store.LobbyMessage, author *store.User) wire.LobbyMessage {
	out := wire.LobbyMessage{ID: wire.Snowflake(m.ID), Content: m.Content, LobbyID: wire.Snowflake(m.LobbyID),
		ChannelID: wire.Snowflake(m.LobbyID), Metadata: m.Metadata, ModerationMetadata: m.ModerationMetadata,
		Flags: m.Flags, ApplicationID: wire.Snowflake(m.AppID),
		Timestamp: stamp.Micro(m.CreatedAt)}
	if author != nil {
		out.Author = users.Object(author, false)
	} else {
		out.Author = goneAuthor(m.AuthorID)
	}
	if m.AdditionalName != "" {
		name := m.AdditionalName
		out.LobbyMember.AdditionalName = &name
	}
	return out
}

// goneAuthor is the author object of a message whose author no longer exists.
func goneAuthor(id uint64) wire.User { return wire.User{ID: wire.Snowflake(id), Discriminator: "0"} }

// author returns the author of m, nil when the user is gone.
func author(q *request, st store.Store, m *store.LobbyMessage) (*store.User, error) {
	u, err := st.GetUser(q.ctx, m.AuthorID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return u, err
}

// sendMessage serves POST /lobbies/{lobby_id}/messages (rule LOB-2): a member sends a message;
// LOBBY_MESSAGE_CREATE goes to the application's webhook (rule WH-2) and to the members.
func (s *Service) sendMessage(q *request) (any, error) {
	obj, wait, err := s.send(q)
	if err != nil {
		return nil, err
	}
	if err := s.awaitCommit(wait); err != nil {
		return nil, err
	}
	return obj, nil
}

// send reads and accepts the request's message (acceptMessage).
func (s *Service) send(q *request) (wire.Encoded, *pending, error) {
	req, err := parseMessage(q.readBody())
	if err != nil {
		return nil, nil, err
	}
	return s.acceptMessage(q, req)
}

// SendOverGateway serves POST /lobbies/{lobby_id}/messages sent over a gateway session
// (gwire.OpRequest) as the route does, from the request's parts, without net/http: auth is the
// session's credential with its scheme, ctx carries its memo (httpx.WithSessionMemo). The message
// is accepted before it returns, and delivered with DeliverAccepted, or answer at the latest;
// answer waits for its commit and gives the route's status and body. The callers of answer share
// its body: it must not be modified.
func (s *Service) SendOverGateway(ctx context.Context, auth, lobbyID string, body []byte) (answer func() (int, []byte)) {
	g := &gatewaySend{s: s, q: request{ctx: ctx, auth: auth, lobbyPath: lobbyID, body: body}}
	g.q.room = &g.room
	if len(body) > 0 { // as the gateway's requests through net/http have it
		g.q.contentType = "application/json"
	}
	g.out, g.err = s.serveRequest(&g.q, bySender, g.send)
	return g.answer
}

// gatewaySend is a message of SendOverGateway: one allocation for its parts, the message
// accepted included.
type gatewaySend struct {
	s    *Service
	q    request
	room acceptedMessage // the message, when accepted
	wait *pending        // the commit its answer waits for (nil: none)
	enc  wire.Encoded    // the message accepted, kept here rather than in out (an allocation)
	out  any
	err  error
}

func (g *gatewaySend) send(q *request) (any, error) {
	q.hold = true
	enc, wait, err := g.s.send(q)
	if err == nil {
		g.enc, g.wait = enc, wait
	}
	return nil, err
}

func (g *gatewaySend) answer() (int, []byte) {
	g.s.DeliverAccepted() // if the gateway has not yet
	if g.err == nil {
		g.err = g.s.awaitCommit(g.wait)
	}
	if g.enc != nil && g.err == nil {
		return http.StatusOK, g.enc
	}
	return httpx.AnswerOf(g.q.ctx, http.MethodPost, "/lobbies/"+g.q.lobbyPath+"/messages", g.s.Logger, g.out, g.err)
}

// toMembers queues an event to every member of the lobby.
func (s *Service) toMembers(q *request, st store.Store, out *outbox, l *store.Lobby, name string, data any) error {
	ids, err := st.ListLobbyMemberIDs(q.ctx, l.ID)
	if err != nil {
		return err
	}
	out.add(l.AppID, ids, name, data)
	return nil
}

// listMessages serves GET /lobbies/{lobby_id}/messages?limit=&after= (rule LOB-3): at most limit
// (1 to 200, default 50) messages of the last 72 hours, newest first, to a member or the
// application. With after (a message id), they are the oldest messages above it, so that a client
// pages forward through what it missed.
func (s *Service) listMessages(q *request) (any, error) {
	v := q.URL.Query()
	limit, err := httpx.QueryLimit(v, DefaultMessageList, MaxMessageList)
	if err != nil {
		return nil, err
	}
	after, paging := uint64(0), v.Has("after")
	if paging { // 0 pages from the first message
		if after, err = strconv.ParseUint(v.Get("after"), 10, 64); err != nil || after > wire.MaxSnowflake {
			return nil, wire.InvalidAt("after", "NUMBER_TYPE_COERCE", "The value is not snowflake.")
		}
	}
	s.flush() // every message members were sent is in the history
	now := s.Clock.Now()
	l, err := s.live(q.ctx, s.Store, q.lobbyID, q.appID, now)
	if err != nil {
		return nil, err
	}
	if !q.bot {
		if _, err := s.Store.GetLobbyMember(q.ctx, l.ID, q.userID); errors.Is(err, store.ErrNotFound) {
			return nil, wire.MissingAccess()
		} else if err != nil {
			return nil, err
		}
	}
	var msgs []store.LobbyMessage
	if paging {
		msgs, err = s.Store.ListLobbyMessagesAfter(q.ctx, l.ID, after, now.Add(-HistoryWindow), int(limit))
	} else {
		msgs, err = s.Store.ListLobbyMessages(q.ctx, l.ID, now.Add(-HistoryWindow), int(limit))
	}
	if err != nil {
		return nil, err
	}
	authors := map[uint64]*store.User{}
	out := make([]wire.LobbyMessage, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		a, ok := authors[m.AuthorID]
		if !ok {
			if a, err = author(q, s.Store, m); err != nil {
				return nil, err
			}
			authors[m.AuthorID] = a
		}
		out = append(out, messageObject(m, a))
	}
	return out, nil
}

// moderate serves PUT /lobbies/{lobby_id}/messages/{message_id}/moderation-metadata (rules
// MODR-1, MSG-3): the application replaces the message's moderation metadata; 204. The members
// get LOBBY_MESSAGE_UPDATE in real time; no webhook is sent, as the platform sends none for a
// metadata-only update (a backend that re-moderates on updates would otherwise loop).
func (s *Service) moderate(q *request) (any, error) {
	mid, err := q.id("message_id")
	if err != nil {
		return nil, err
	}
	raw, err := readBody(q.Request)
	if err != nil {
		return nil, err
	}
	meta, err := parseModeration(raw)
	if err != nil {
		return nil, err
	}
	return nil, s.inLobby(q, func(st store.Store, out *outbox, l *store.Lobby, now time.Time) error {
		m, err := st.GetLobbyMessage(q.ctx, l.ID, mid)
		if errors.Is(err, store.ErrNotFound) {
			return wire.UnknownMessage()
		}
		if err != nil {
			return err
		}
		m.ModerationMetadata = orNil(meta)
		if err := st.UpdateLobbyMessage(q.ctx, m); err != nil {
			return err
		}
		a, err := author(q, st, m)
		if err != nil {
			return err
		}
		return s.toMembers(q, st, out, l, gwire.EventLobbyMessageUpdate, messageObject(m, a))
	})
}
