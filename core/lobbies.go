package core

import (
	"context"
	"encoding/json"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/lobbies"
	"sdkpp/core/messages"
	"sdkpp/core/users"
	"sdkpp/wire"
)

// lobbyState is the Client's lobby cache (its own lock) and handlers.
type lobbyState struct {
	cache lobbies.Cache
}

// CreateOrJoinLobbyWithMetadata is CreateOrJoinLobby that also sets the lobby's metadata and the
// player's member metadata.
func (c *Client) CreateOrJoinLobbyWithMetadata(secret string, lobbyMetadata, memberMetadata map[string]string, cb Callback[ClientCreateOrJoinLobbyCallback]) {
	Secrets.Add(secret)
	authCall1(c, "CreateOrJoinLobby", nil, cb, func(ctx context.Context, auth string) (uint64, error) {
		var l wire.Lobby
		err := c.api.Do(ctx, lobbies.CreateOrJoin(auth, secret, lobbyMetadata, memberMetadata), &l)
		if err == nil {
			c.cacheLobby(&l) // a member event newer than this answer may have come first: the cache keeps the newer
		}
		return uint64(l.ID), err
	})
}

// LeaveLobby leaves a lobby the player joined with a secret.
func (c *Client) LeaveLobby(lobbyId uint64, cb Callback[ClientLeaveLobbyCallback]) {
	authCall(c, "LeaveLobby", nil, cb, func(ctx context.Context, auth string) error {
		err := c.api.Do(ctx, lobbies.Leave(auth, lobbyId), nil)
		if err == nil {
			c.forgetLobby(lobbyId, 0)
		}
		return err
	})
}

// SendLobbyMessageWithMetadata is SendLobbyMessage with sender metadata, over the gateway when
// connected (tunnel.go); its nonce makes a repeat over HTTP safe.
func (c *Client) SendLobbyMessageWithMetadata(lobbyId uint64, content string, metadata map[string]string, cb Callback[ClientSendUserMessageCallback]) {
	once := resultOnce1(c, cb)
	auth := c.authHeader()
	if auth == "" {
		once.Fire(func() { cb.Fn(resultOf(sdkerr.ErrNotReady), 0) })
		return
	}
	m := new(wire.LobbyMessage)
	c.idempotentCall(lobbies.SendMessage(auth, lobbyId, content, metadata), m, func(err error) {
		if err != nil {
			c.logf(LoggingSeverityWarning, "SendLobbyMessage failed: %v", err)
			*m = wire.LobbyMessage{}
		} else {
			c.storeMessage(messages.FromLobby(m), users.Of(&m.Author))
		}
		once.Fire(func() { cb.Fn(resultOf(err), uint64(m.ID)) })
	})
}

// learnMembers caches the users lobby members carry, with their game profiles, for
// LobbyMemberHandle.User and UserHandle.
func (c *Client) learnMembers(members []wire.LobbyMember) {
	us := make([]*wire.User, len(members))
	for i := range members {
		us[i] = members[i].User
	}
	c.users.Learn(us...)
}

// cacheLobby stores l unless the cache holds a newer state of it, learns its members' users, and
// reports whether the lobby was new.
func (c *Client) cacheLobby(l *wire.Lobby) bool {
	applied, added := c.lobby.cache.Apply(*l)
	if !applied {
		return false
	}
	c.learnMembers(l.Members)
	c.msg.cache.NoteLobby(uint64(l.ID), l.LastMessageID)
	return added
}

// forgetLobby takes a lobby out of the cache, gone at revision rev (0: unknown), and reports
// whether it was cached.
func (c *Client) forgetLobby(id, rev uint64) bool { return c.lobby.cache.Remove(id, rev) }

// memberSlots are the handlers of the member changes (core/lobbies.MemberAdded, ...).
var memberSlots = [...]func(*handlers) *handlerSlot[ClientLobbyMemberAddedCallback]{
	lobbies.MemberAdded:   func(h *handlers) *handlerSlot[ClientLobbyMemberAddedCallback] { return &h.lobbyMemberAdded },
	lobbies.MemberUpdated: func(h *handlers) *handlerSlot[ClientLobbyMemberAddedCallback] { return &h.lobbyMemberUpdated },
	lobbies.MemberRemoved: func(h *handlers) *handlerSlot[ClientLobbyMemberAddedCallback] { return &h.lobbyMemberRemoved },
}

// onLobbyDispatch applies a lobby event (core/lobbies.Decode) to the cache and queues the
// handlers; a player removed from a lobby no longer has it.
func (c *Client) onLobbyDispatch(event string, data json.RawMessage) {
	ev, err := lobbies.Decode(event, data)
	switch {
	case err != nil:
		c.logf(LoggingSeverityWarning, "%v", err)
	case ev.Lobby != nil:
		c.cacheLobby(ev.Lobby)
		id, slot := uint64(ev.Lobby.ID), &c.handlers.lobbyUpdated
		if ev.Created {
			slot = &c.handlers.lobbyCreated
		}
		slot.Post(func(f ClientLobbyUpdatedCallback) { f(id) })
	case ev.Deleted != nil:
		if id := uint64(ev.Deleted.ID); c.forgetLobby(id, uint64(ev.Deleted.Revision)) {
			c.handlers.lobbyDeleted.Post(func(f ClientLobbyDeletedCallback) { f(id) })
		}
	default:
		m := ev.Member
		lobbyID, memberID := uint64(m.LobbyID), uint64(m.Member.ID)
		c.lobby.cache.ApplyMember(ev.MemberKind, *m)
		c.learnMembers([]wire.LobbyMember{m.Member})
		memberSlots[ev.MemberKind](&c.handlers).Post(func(f ClientLobbyMemberAddedCallback) { f(lobbyID, memberID) })
		if ev.MemberKind == lobbies.MemberRemoved && memberID == c.users.Current() && c.forgetLobby(lobbyID, uint64(m.Revision)) {
			c.handlers.lobbyDeleted.Post(func(f ClientLobbyDeletedCallback) { f(lobbyID) }) // the player left or was removed
		}
	}
}

// GetLobbyHandle returns a lobby the player is in, or nil.
func (c *Client) GetLobbyHandle(lobbyId uint64) *LobbyHandle {
	if !c.lobby.cache.Has(lobbyId) {
		return nil
	}
	return &LobbyHandle{c: c, id: lobbyId}
}

// LobbyHandle is a live view of a cached lobby.
type LobbyHandle struct {
	c  *Client
	id uint64
}

// lobby returns a deep copy of the cached lobby, or an empty one.
func (h *LobbyHandle) lobby() wire.Lobby {
	if h.c.isClosed() {
		return wire.Lobby{}
	}
	l, _ := h.c.lobby.cache.Get(h.id)
	return l
}

// GetLobbyMemberHandle returns a view of one member, or nil.
func (h *LobbyHandle) GetLobbyMemberHandle(memberId uint64) *LobbyMemberHandle {
	if _, ok := lobbies.Member(h.lobby(), memberId); !ok {
		return nil
	}
	return &LobbyMemberHandle{c: h.c, lobbyID: h.id, id: memberId}
}

// LobbyMemberHandle is a live view of a member of a cached lobby.
type LobbyMemberHandle struct {
	c           *Client
	lobbyID, id uint64
}

func (h *LobbyMemberHandle) member() wire.LobbyMember {
	m, _ := lobbies.Member((&LobbyHandle{c: h.c, id: h.lobbyID}).lobby(), h.id)
	return m
}

// User returns a view of the member's user, or nil when the member is gone or its user unknown.
func (h *LobbyMemberHandle) User() *UserHandle {
	if h.member().ID == 0 {
		return nil
	}
	return h.c.GetUser(h.id)
}
