package core

import (
	"context"
	"encoding/json"

	"sdkpp/core/callbacks"
	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/messages"
	"sdkpp/core/records"
	"sdkpp/core/users"
	"sdkpp/wire"
)

// Message limits of the SDK (rule LIM-2): a history request returns at most MaxMessageHistory
// messages from at most the last MessageHistoryWindow.
const (
	MaxMessageHistory    = messages.MaxHistory
	MessageHistoryWindow = messages.HistoryWindow
)

// messageState is the Client's message cache (its own lock) and handlers.
type messageState struct {
	cache  messages.Cache
	remote messages.Remote // its endpoints, filling cache and the user cache
}

// deliverCreated caches a message that arrived live (a dispatch, or a message fetched to catch
// up after a new session) with its author, and queues the created handler, exactly once per
// message and in id order per channel. It reports whether the message was delivered.
func (c *Client) deliverCreated(m *messages.Message, author *users.User) bool {
	c.users.Put(author)
	if !c.msg.cache.Created(m) {
		return false
	}
	callbacks.PostValue(&c.handlers.messageCreated, m.ID, func(f ClientMessageCreatedCallback, id uint64) { f(id) })
	return true
}

// deliverUpdated replaces a cached message and queues the updated handler.
func (c *Client) deliverUpdated(m *messages.Message, author *users.User) {
	c.users.Put(author)
	c.msg.cache.Store(m)
	c.handlers.messageUpdated.Post(func(f ClientMessageUpdatedCallback) { f(m.ID) })
}

// storeMessage caches a message the player sent or edited, with its author.
func (c *Client) storeMessage(m *messages.Message, author *users.User) {
	c.users.Put(author)
	c.msg.cache.Store(m)
}

// onMessageDispatch applies a message event from the gateway (core/messages.Decode).
func (c *Client) onMessageDispatch(event string, data json.RawMessage) {
	ev, err := messages.Decode(event, data)
	switch {
	case err != nil:
		c.logf(LoggingSeverityWarning, "%v", err)
	case ev.Deleted:
		c.msg.cache.Forget(ev.ID, ev.ChannelID)
		c.handlers.messageDeleted.Post(func(f ClientMessageDeletedCallback) { f(ev.ID, ev.ChannelID) })
	case !ev.Created:
		c.msg.cache.NoteDirect(ev.Message, c.users.Current())
		c.deliverUpdated(ev.Message, ev.Author)
	case ev.Message.LobbyID != 0 && c.msg.cache.Hold(messages.Held{M: ev.Message, Author: ev.Author}): // held while catching up
	default:
		c.msg.cache.NoteDirect(ev.Message, c.users.Current())
		c.deliverCreated(ev.Message, ev.Author)
	}
}

// GetMessageHandle returns a message from the cache, or nil; it makes no request.
func (c *Client) GetMessageHandle(messageId uint64) *MessageHandle {
	if _, ok := c.msg.cache.Get(messageId); !ok {
		return nil
	}
	return &MessageHandle{c: c, id: messageId}
}

// handles returns views of cached messages, newest first.
func (c *Client) handles(ids []uint64) []*MessageHandle {
	out := make([]*MessageHandle, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		out = append(out, &MessageHandle{c: c, id: ids[i]})
	}
	return out
}

// GetLobbyMessagesWithLimit fetches the newest messages of a lobby the player is in, newest
// first: at most 200, from at most the last 72 hours (rule LIM-2).
func (c *Client) GetLobbyMessagesWithLimit(lobbyId uint64, limit int32, cb Callback[ClientGetLobbyMessagesCallback]) {
	auth, n, answer, ok := c.startHistory("GetLobbyMessagesWithLimit", limit, cb)
	if !ok {
		return
	}
	if c.GetLobbyHandle(lobbyId) == nil {
		answer(nil, sdkerr.Invalid("the player is not in lobby %d", lobbyId))
		return
	}
	c.start(func(ctx context.Context) { answer(c.msg.remote.LobbyHistory(ctx, auth, lobbyId, n)) })
}

// startHistory checks a history request. It returns the authorization, the capped limit and
// the function that answers the request; ok is false when the request was refused and answered.
func (c *Client) startHistory(op string, limit int32, cb Callback[func(*ClientResult, []*MessageHandle)]) (auth string, n int, answer func([]uint64, error), ok bool) {
	once := resultOnce1(c, cb)
	answer = func(ids []uint64, err error) {
		if err != nil {
			c.logf(LoggingSeverityWarning, "%s failed: %v", op, err)
			once.Fire(func() { cb.Fn(resultOf(err), nil) })
			return
		}
		once.Fire(func() { cb.Fn(success(), c.handles(ids)) })
	}
	auth = c.authHeader()
	n, err := messages.HistoryLimit(limit)
	if auth == "" {
		err = sdkerr.ErrNotReady
	}
	if err != nil {
		answer(nil, err)
		return "", 0, nil, false
	}
	return auth, n, answer, true
}

// SendUserMessageWithMetadata sends a direct message with sender metadata.
func (c *Client) SendUserMessageWithMetadata(recipientId uint64, content string, metadata map[string]string, cb Callback[ClientSendUserMessageCallback]) {
	authCall1(c, "SendUserMessage", messages.CheckContent(content), cb, func(ctx context.Context, auth string) (uint64, error) {
		w, err := c.msg.remote.SendDirect(ctx, auth, recipientId, content, metadata)
		if err != nil {
			return 0, err
		}
		c.storeMessage(messages.FromDirect(w), users.Of(&w.Author))
		return uint64(w.ID), nil
	})
}

// EditUserMessage replaces the content of a direct message the player sent.
func (c *Client) EditUserMessage(recipientId uint64, messageId uint64, content string, cb Callback[ClientEditUserMessageCallback]) {
	authCall(c, "EditUserMessage", messages.CheckContent(content), cb, func(ctx context.Context, auth string) error {
		w, err := c.msg.remote.EditDirect(ctx, auth, recipientId, messageId, content)
		if w != nil {
			c.storeMessage(messages.FromDirect(w), users.Of(&w.Author))
		}
		return err
	})
}

// DeleteUserMessage deletes a direct message the player sent.
func (c *Client) DeleteUserMessage(recipientId uint64, messageId uint64, cb Callback[ClientDeleteUserMessageCallback]) {
	authCall(c, "DeleteUserMessage", nil, cb, func(ctx context.Context, auth string) error {
		return c.msg.remote.DeleteDirect(ctx, auth, recipientId, messageId)
	})
}

// GetUserMessagesWithLimit returns the newest direct messages with a user, newest first: at most
// 200 from the last 72 hours (rule LIM-2). The local cache answers when it already holds them.
func (c *Client) GetUserMessagesWithLimit(recipientId uint64, limit int32, cb Callback[ClientUserMessagesWithLimitCallback]) {
	auth, n, answer, ok := c.startHistory("GetUserMessagesWithLimit", limit, cb)
	if !ok {
		return
	}
	if ids, ok := c.msg.remote.CachedDirect(recipientId, n, c.clock.Now().Add(-MessageHistoryWindow)); ok {
		c.logf(LoggingSeverityVerbose, "GetUserMessagesWithLimit: %d messages from the cache", len(ids))
		answer(ids, nil)
		return
	}
	c.start(func(ctx context.Context) { answer(c.msg.remote.DirectHistory(ctx, auth, recipientId, n)) })
}

// GetUserMessageSummaries lists the player's direct-message conversations, newest first.
func (c *Client) GetUserMessageSummaries(cb Callback[ClientUserMessageSummariesCallback]) {
	getList(c, "GetUserMessageSummaries", "/users/@me/channels", cb, func(chans []wire.DMChannel) []*UserMessageSummary {
		var out []*UserMessageSummary
		for _, s := range c.msg.remote.Summaries(chans, c.users.Current()) {
			out = append(out, records.UserMessageSummaryOf(s.UserID, s.LastMessageID))
		}
		return out
	})
}

// MessageHandle is a live view of a cached message.
type MessageHandle struct {
	c  *Client
	id uint64
}

// message returns a copy of the cached message, or an empty one.
func (h *MessageHandle) message() messages.Message {
	if h.c.isClosed() {
		return messages.Message{}
	}
	m, _ := h.c.msg.cache.Get(h.id)
	return m
}

// Recipient returns the recipient of a direct message, if the client knows the user.
func (h *MessageHandle) Recipient() *UserHandle {
	id := h.message().RecipientID
	if id == 0 {
		return nil
	}
	return h.c.GetUser(id)
}

// Lobby returns the lobby of a lobby message the player is still in.
func (h *MessageHandle) Lobby() *LobbyHandle {
	id := h.message().LobbyID
	if id == 0 {
		return nil
	}
	return h.c.GetLobbyHandle(id)
}

// ApplicationId returns the application that sent the message (rule MSG-1).
func (h *MessageHandle) ApplicationId() (uint64, bool) {
	id := h.message().AppID
	return id, id != 0
}

// startCatchUp begins a new session's catch-up of every cached lobby with a known last message
// (core/messages); READY calls it.
func (c *Client) startCatchUp() {
	gen, todo := c.msg.cache.NewSession(c.lobby.cache.IDs())
	if len(todo) == 0 {
		return
	}
	f := &messages.Fetcher{API: c.api, Clock: c.clock, Auth: c.authHeader,
		Deliver: func(m *messages.Message, author *users.User) { c.deliverCreated(m, author) },
		Verbose: c.logAt(LoggingSeverityVerbose), Info: c.logAt(LoggingSeverityInfo), Warn: c.logAt(LoggingSeverityWarning)}
	c.start(func(ctx context.Context) { c.msg.cache.CatchUp(ctx, f, gen, todo) })
}
