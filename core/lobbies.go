package core

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	gwire "sdkpp/wire/gateway"

	"sdkpp/core/lobbies"
	"sdkpp/core/messages"
	"sdkpp/core/rest"
	"sdkpp/core/tunnel"
	"sdkpp/core/users"
	"sdkpp/wire"
)

// lobbyState is the Client's lobby cache (its own lock) and handlers.
type lobbyState struct {
	cache lobbies.Cache
}

// CreateOrJoinLobby creates the game's lobby of this secret or joins it (rule LOB-1).
func (c *Client) CreateOrJoinLobby(secret string, cb Callback[ClientCreateOrJoinLobbyCallback]) {
	c.CreateOrJoinLobbyWithMetadata(secret, nil, nil, cb)
}

// CreateOrJoinLobbyWithMetadata is CreateOrJoinLobby that also sets the lobby's metadata and the
// player's member metadata.
func (c *Client) CreateOrJoinLobbyWithMetadata(secret string, lobbyMetadata, memberMetadata map[string]string, cb Callback[ClientCreateOrJoinLobbyCallback]) {
	once := resultOnce1(c, cb)
	Secrets.Add(secret)
	auth := c.authHeader()
	if auth == "" {
		once.Fire(func() { cb.Fn(resultOf(errNotReady), 0) })
		return
	}
	c.start(func(ctx context.Context) {
		var l wire.Lobby
		err := c.api.Do(ctx, rest.Request{Method: http.MethodPut, Path: "/lobbies", Auth: auth, JSON: wire.CreateOrJoinLobbyRequest{
			Secret: secret, LobbyMetadata: lobbyMetadata, MemberMetadata: memberMetadata}}, &l)
		if err == nil {
			// A member event newer than this answer may have come first: the cache keeps the newer.
			c.cacheLobby(&l)
		} else {
			c.logf(LoggingSeverityWarning, "CreateOrJoinLobby failed: %v", err)
		}
		once.Fire(func() { cb.Fn(resultOf(err), uint64(l.ID)) })
	})
}

// LeaveLobby leaves a lobby the player joined with a secret.
func (c *Client) LeaveLobby(lobbyId uint64, cb Callback[ClientLeaveLobbyCallback]) {
	auth := c.authHeader()
	if auth == "" {
		once := resultOnce(c, cb)
		once.Fire(func() { cb.Fn(resultOf(errNotReady)) })
		return
	}
	c.resultCall(rest.Request{Method: http.MethodDelete, Path: "/lobbies/" + strconv.FormatUint(lobbyId, 10) + "/members/@me", Auth: auth},
		"LeaveLobby", Callback[func(*ClientResult)](cb), func() { c.forgetLobby(lobbyId, 0) })
}

// SendLobbyMessage sends a message to a lobby the player is in (rule LOB-2).
func (c *Client) SendLobbyMessage(lobbyId uint64, content string, cb Callback[ClientSendUserMessageCallback]) {
	c.SendLobbyMessageWithMetadata(lobbyId, content, nil, cb)
}

// SendLobbyMessageWithMetadata is SendLobbyMessage with sender metadata.
func (c *Client) SendLobbyMessageWithMetadata(lobbyId uint64, content string, metadata map[string]string, cb Callback[ClientSendUserMessageCallback]) {
	once := resultOnce1(c, cb)
	auth := c.authHeader()
	if auth == "" {
		once.Fire(func() { cb.Fn(resultOf(errNotReady), 0) })
		return
	}
	c.start(func(ctx context.Context) {
		// Over the gateway when connected (tunnel.go); the nonce makes a repeat over HTTP safe.
		var m wire.LobbyMessage
		err := c.doIdempotent(ctx, rest.Request{Method: http.MethodPost, Path: "/lobbies/" + strconv.FormatUint(lobbyId, 10) + "/messages",
			Auth: auth, JSON: wire.LobbyMessageRequest{Content: content, Metadata: metadata, Nonce: tunnel.NewNonce(), EnforceNonce: true}}, &m)
		if err != nil {
			c.logf(LoggingSeverityWarning, "SendLobbyMessage failed: %v", err)
		} else {
			c.storeMessage(messages.FromLobby(&m), users.Of(&m.Author))
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

// onLobbyDispatch applies LOBBY_CREATE and LOBBY_UPDATE to the cache and queues the handlers.
func (c *Client) onLobbyDispatch(event string, data json.RawMessage) {
	l, ok := decodeEvent(c, event, data, func(l *wire.Lobby) bool { return l.ID != 0 })
	if !ok {
		return
	}
	c.cacheLobby(l)
	id := uint64(l.ID)
	slot := &c.handlers.lobbyUpdated
	if event == gwire.EventLobbyCreate {
		slot = &c.handlers.lobbyCreated
	}
	postHandler(c, slot, func(f ClientLobbyUpdatedCallback) { f(id) })
}

// onLobbyDeleteDispatch applies LOBBY_DELETE.
func (c *Client) onLobbyDeleteDispatch(_ string, data json.RawMessage) {
	var d wire.LobbyDeleted
	if json.Unmarshal(data, &d) == nil && c.forgetLobby(uint64(d.ID), uint64(d.Revision)) {
		postHandler(c, &c.handlers.lobbyDeleted, func(f ClientLobbyDeletedCallback) { f(uint64(d.ID)) })
	}
}

// memberEvents are the member changes of the lobby member events, and the slot each posts.
var memberEvents = map[string]struct {
	kind int // lobbies.MemberAdded, MemberUpdated or MemberRemoved
	slot func(*handlers) *handlerSlot[ClientLobbyMemberAddedCallback]
}{
	gwire.EventLobbyMemberAdd:    {lobbies.MemberAdded, func(h *handlers) *handlerSlot[ClientLobbyMemberAddedCallback] { return &h.lobbyMemberAdded }},
	gwire.EventLobbyMemberUpdate: {lobbies.MemberUpdated, func(h *handlers) *handlerSlot[ClientLobbyMemberAddedCallback] { return &h.lobbyMemberUpdated }},
	gwire.EventLobbyMemberRemove: {lobbies.MemberRemoved, func(h *handlers) *handlerSlot[ClientLobbyMemberAddedCallback] { return &h.lobbyMemberRemoved }},
}

// onMemberDispatch applies a lobby member event (memberEvents); a player removed from a lobby
// no longer has it.
func (c *Client) onMemberDispatch(event string, data json.RawMessage) {
	m, ok := decodeEvent(c, event, data, func(m *wire.LobbyMemberEvent) bool { return m.LobbyID != 0 })
	if !ok {
		return
	}
	ev := memberEvents[event]
	lobbyID, memberID := uint64(m.LobbyID), uint64(m.Member.ID)
	c.lobby.cache.ApplyMember(ev.kind, *m)
	c.learnMembers([]wire.LobbyMember{m.Member})
	postHandler(c, ev.slot(&c.handlers), func(f ClientLobbyMemberAddedCallback) { f(lobbyID, memberID) })
	if ev.kind == lobbies.MemberRemoved && memberID == c.users.Current() && c.forgetLobby(lobbyID, uint64(m.Revision)) {
		postHandler(c, &c.handlers.lobbyDeleted, func(f ClientLobbyDeletedCallback) { f(lobbyID) }) // the player left or was removed
	}
}

// GetLobbyHandle returns a lobby the player is in, or nil.
func (c *Client) GetLobbyHandle(lobbyId uint64) *LobbyHandle {
	if !c.lobby.cache.Has(lobbyId) {
		return nil
	}
	return &LobbyHandle{c: c, id: lobbyId}
}

// GetLobbyIds returns the lobbies the player is in, in id order.
func (c *Client) GetLobbyIds() []uint64 {
	return c.lobby.cache.IDs()
}

// LobbyHandle is a live view of a cached lobby.
type LobbyHandle struct {
	c  *Client
	id uint64
}

// Clone returns another view of the same lobby.
func (h *LobbyHandle) Clone() *LobbyHandle { v := *h; return &v }

// lobby returns a deep copy of the cached lobby, or an empty one.
func (h *LobbyHandle) lobby() wire.Lobby {
	if h.c.isClosed() {
		return wire.Lobby{}
	}
	l, _ := h.c.lobby.cache.Get(h.id)
	return l
}

// Id returns the lobby's id, 0 once it is gone.
func (h *LobbyHandle) Id() uint64 { return uint64(h.lobby().ID) }

// LobbyMemberIds returns the members' user ids.
func (h *LobbyHandle) LobbyMemberIds() []uint64 {
	var ids []uint64
	for _, m := range h.lobby().Members {
		ids = append(ids, uint64(m.ID))
	}
	return ids
}

// LobbyMembers returns views of the members.
func (h *LobbyHandle) LobbyMembers() []*LobbyMemberHandle {
	var out []*LobbyMemberHandle
	for _, m := range h.lobby().Members {
		out = append(out, &LobbyMemberHandle{c: h.c, lobbyID: h.id, id: uint64(m.ID)})
	}
	return out
}

// GetLobbyMemberHandle returns a view of one member, or nil.
func (h *LobbyHandle) GetLobbyMemberHandle(memberId uint64) *LobbyMemberHandle {
	for _, m := range h.lobby().Members {
		if uint64(m.ID) == memberId {
			return &LobbyMemberHandle{c: h.c, lobbyID: h.id, id: memberId}
		}
	}
	return nil
}

// Metadata returns the lobby's metadata.
func (h *LobbyHandle) Metadata() map[string]string { return h.lobby().Metadata }

// LobbyMemberHandle is a live view of a member of a cached lobby.
type LobbyMemberHandle struct {
	c           *Client
	lobbyID, id uint64
}

// Clone returns another view of the same member.
func (h *LobbyMemberHandle) Clone() *LobbyMemberHandle { v := *h; return &v }

func (h *LobbyMemberHandle) member() wire.LobbyMember {
	for _, m := range (&LobbyHandle{c: h.c, id: h.lobbyID}).lobby().Members {
		if uint64(m.ID) == h.id {
			return m
		}
	}
	return wire.LobbyMember{}
}

// Id returns the member's user id, 0 once the member is gone.
func (h *LobbyMemberHandle) Id() uint64 { return uint64(h.member().ID) }

// CanLinkLobby reports whether the member may link a channel to the lobby.
func (h *LobbyMemberHandle) CanLinkLobby() bool {
	return h.member().Flags&wire.LobbyMemberCanLinkLobby != 0
}

// Metadata returns the member's metadata.
func (h *LobbyMemberHandle) Metadata() map[string]string { return h.member().Metadata }

// User returns a view of the member's user, or nil when the member is gone or its user unknown.
func (h *LobbyMemberHandle) User() *UserHandle {
	if h.member().ID == 0 {
		return nil
	}
	return h.c.GetUser(h.id)
}
