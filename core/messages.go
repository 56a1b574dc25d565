package core

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	gwire "sdkpp/wire/gateway"

	"sdkpp/core/rest"
	"sdkpp/wire"
)

// Message limits of the SDK (rule LIM-2): a history request returns at most MaxMessageHistory
// messages from at most the last MessageHistoryWindow.
const (
	MaxMessageHistory    = 200
	MessageHistoryWindow = 72 * time.Hour
)

// messageCacheSize is how many of the newest messages of each channel the client keeps.
const messageCacheSize = 500

// message is a cached message, direct or in a lobby.
type message struct {
	id, channelID, lobbyID uint64
	authorID, recipientID  uint64
	appID                  uint64 // 0 when unknown
	content                string
	sent, edited           time.Time
	metadata, moderation   map[string]string
	additionalName         *string
}

// channelLog is what the client knows of one channel's messages.
type channelLog struct {
	ids []uint64 // cached message ids, oldest first, at most messageCacheSize
	// lastCreated is the newest message delivered as created: an event for it or an older one is
	// a duplicate (message ids grow with time).
	lastCreated uint64
	// newest is how many of the channel's newest messages the cache holds without a gap, known
	// from a history request; complete means the cache holds the whole history window.
	newest   int
	complete bool
	// baseline is the newest message when the client first learned of the lobby (its
	// last_message_id), and hasBaseline says it is known: a catch-up starts there when no message
	// was delivered yet.
	baseline    uint64
	hasBaseline bool
}

// messageState is the Client's message cache and handlers; c.mu guards it.
type messageState struct {
	byID       map[uint64]*message
	channels   map[uint64]*channelLog
	dmChannels map[uint64]uint64 // recipient id → DM channel id

	created handlerSlot[ClientMessageCreatedCallback]
	updated handlerSlot[ClientMessageUpdatedCallback]
	deleted handlerSlot[ClientMessageDeletedCallback]
}

// SetMessageCreatedCallback sets the handler of new messages, replacing the previous one.
func (c *Client) SetMessageCreatedCallback(cb Callback[ClientMessageCreatedCallback]) {
	setHandler(c, &c.msg.created, cb)
}

// SetMessageUpdatedCallback sets the handler of edited messages, replacing the previous one.
func (c *Client) SetMessageUpdatedCallback(cb Callback[ClientMessageUpdatedCallback]) {
	setHandler(c, &c.msg.updated, cb)
}

// SetMessageDeletedCallback sets the handler of deleted messages, replacing the previous one.
func (c *Client) SetMessageDeletedCallback(cb Callback[ClientMessageDeletedCallback]) {
	setHandler(c, &c.msg.deleted, cb)
}

// timeOf parses an RFC 3339 timestamp of the service; the zero time when absent or malformed.
func timeOf(s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// userOf converts a user object of the service (the SDK's one converter); nil for none.
func userOf(u *wire.User) *userData {
	if u == nil || u.ID == 0 {
		return nil
	}
	return &userData{id: uint64(u.ID), username: u.Username, globalName: u.GlobalName, avatar: u.Avatar, isProvisional: u.IsProvisional}
}

// lobbyMessage converts a lobby message of the service.
func lobbyMessage(w *wire.LobbyMessage) *message {
	return &message{id: uint64(w.ID), channelID: uint64(w.LobbyID), lobbyID: uint64(w.LobbyID), authorID: uint64(w.Author.ID),
		appID: uint64(w.ApplicationID), content: w.Content, sent: timeOf(&w.Timestamp), edited: timeOf(w.EditedTimestamp),
		metadata: w.Metadata, moderation: w.ModerationMetadata, additionalName: w.LobbyMember.AdditionalName}
}

// directMessage converts a direct message of the service.
func directMessage(w *wire.Message) *message {
	return &message{id: uint64(w.ID), channelID: uint64(w.ChannelID), authorID: uint64(w.Author.ID), recipientID: uint64(w.RecipientID),
		appID: uint64(w.ApplicationID), content: w.Content, sent: timeOf(&w.Timestamp), edited: timeOf(w.EditedTimestamp),
		metadata: w.Metadata, moderation: w.ModerationMetadata}
}

// channelLocked returns the log of a channel, making it.
func (c *Client) channelLocked(id uint64) *channelLog {
	if c.msg.channels == nil {
		c.msg.channels = map[uint64]*channelLog{}
	}
	ch := c.msg.channels[id]
	if ch == nil {
		ch = &channelLog{}
		c.msg.channels[id] = ch
	}
	return ch
}

// storeLocked puts m (and its author) into the cache, replacing an older copy. It reports whether
// the message was new to the cache.
func (c *Client) storeLocked(m *message, author *userData) bool {
	if author != nil {
		c.cacheUserLocked(author)
	}
	if c.msg.byID == nil {
		c.msg.byID = map[uint64]*message{}
	}
	_, known := c.msg.byID[m.id]
	c.msg.byID[m.id] = m
	if known {
		return false
	}
	ch := c.channelLocked(m.channelID)
	i, _ := slices.BinarySearch(ch.ids, m.id)
	ch.ids = slices.Insert(ch.ids, i, m.id)
	if len(ch.ids) > messageCacheSize {
		drop := len(ch.ids) - messageCacheSize
		for _, id := range ch.ids[:drop] {
			delete(c.msg.byID, id)
		}
		ch.ids = slices.Delete(ch.ids, 0, drop)
		ch.complete = false
		ch.newest = min(ch.newest, len(ch.ids))
	}
	return true
}

// deliverCreated caches a message that arrived live (a dispatch, or a message fetched to catch
// up after a new session) and queues the created handler, exactly once per message and in id
// order per channel: a message not newer than the last one delivered is dropped. It reports
// whether the message was delivered.
func (c *Client) deliverCreated(m *message, author *userData) bool {
	c.mu.Lock()
	ch := c.channelLocked(m.channelID)
	if m.id <= ch.lastCreated {
		c.mu.Unlock()
		return false
	}
	ch.lastCreated = m.id
	if c.storeLocked(m, author) && ch.newest > 0 {
		ch.newest++ // a live message extends the gap-free window at its newest end
	}
	c.mu.Unlock()
	postHandler(c, &c.msg.created, func(f ClientMessageCreatedCallback) { f(m.id) })
	return true
}

// deliverUpdated replaces a cached message and queues the updated handler.
func (c *Client) deliverUpdated(m *message, author *userData) {
	c.mu.Lock()
	c.storeLocked(m, author)
	c.mu.Unlock()
	postHandler(c, &c.msg.updated, func(f ClientMessageUpdatedCallback) { f(m.id) })
}

// forgetMessage removes a message from the cache.
func (c *Client) forgetMessage(id, channelID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.msg.byID, id)
	if ch := c.msg.channels[channelID]; ch != nil {
		if i, found := slices.BinarySearch(ch.ids, id); found {
			ch.ids = slices.Delete(ch.ids, i, i+1)
			ch.newest = min(ch.newest, len(ch.ids))
		}
	}
}

// onMessageDispatch applies a message event from the gateway.
func (c *Client) onMessageDispatch(event string, data json.RawMessage) {
	switch event {
	case wire.EventLobbyMessageCreate, wire.EventLobbyMessageUpdate:
		var w wire.LobbyMessage
		if err := wire.DecodeLobbyMessage(data, &w); err != nil || w.ID == 0 || w.LobbyID == 0 {
			c.logf(LoggingSeverityWarning, "malformed %s", event)
			return
		}
		if event == wire.EventLobbyMessageCreate {
			if m, a := lobbyMessage(&w), userOf(&w.Author); !c.holdLive(m, a) { // held while catching up
				c.deliverCreated(m, a)
			}
		} else {
			c.deliverUpdated(lobbyMessage(&w), userOf(&w.Author))
		}
	case gwire.EventMessageCreate, gwire.EventMessageUpdate:
		var w wire.Message
		if err := json.Unmarshal(data, &w); err != nil || w.ID == 0 || w.ChannelID == 0 {
			c.logf(LoggingSeverityWarning, "malformed %s", event)
			return
		}
		c.noteDMChannel(&w)
		if event == gwire.EventMessageCreate {
			c.deliverCreated(directMessage(&w), userOf(&w.Author))
		} else {
			c.deliverUpdated(directMessage(&w), userOf(&w.Author))
		}
	case gwire.EventMessageDelete:
		var d wire.MessageDelete
		if err := json.Unmarshal(data, &d); err != nil || d.ID == 0 {
			c.logf(LoggingSeverityWarning, "malformed %s", event)
			return
		}
		c.forgetMessage(uint64(d.ID), uint64(d.ChannelID))
		postHandler(c, &c.msg.deleted, func(f ClientMessageDeletedCallback) { f(uint64(d.ID), uint64(d.ChannelID)) })
	}
}

// noteDMChannel remembers the DM channel of a direct message's other party.
func (c *Client) noteDMChannel(w *wire.Message) {
	me := c.currentUserID()
	other := uint64(w.RecipientID)
	if other == me {
		other = uint64(w.Author.ID)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.msg.dmChannels == nil {
		c.msg.dmChannels = map[uint64]uint64{}
	}
	c.msg.dmChannels[other] = uint64(w.ChannelID)
}

// GetMessageHandle returns a message from the cache, or nil; it makes no request.
func (c *Client) GetMessageHandle(messageId uint64) *MessageHandle {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.msg.byID[messageId] == nil {
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

// historyLimit checks a history request's limit and caps it at MaxMessageHistory (rule LIM-2).
func historyLimit(limit int32) (int, error) {
	if limit <= 0 {
		return 0, invalid("limit must be positive, not %d", limit)
	}
	return min(int(limit), MaxMessageHistory), nil
}

// fetchHistory gets a channel's newest messages from path, caches them, and returns their ids,
// oldest first. A reply shorter than limit is the whole history window.
func (c *Client) fetchHistory(ctx context.Context, auth, path string, limit int, channelID uint64, isLobby bool) ([]uint64, error) {
	req := rest.Request{Path: path + "?limit=" + strconv.Itoa(limit), Auth: auth}
	var msgs []*message
	var authors []*userData
	if isLobby {
		var ws []wire.LobbyMessage
		if err := c.api.Do(ctx, req, &ws); err != nil {
			return nil, err
		}
		for i := range ws {
			msgs, authors = append(msgs, lobbyMessage(&ws[i])), append(authors, userOf(&ws[i].Author))
		}
	} else {
		var ws []wire.Message
		if err := c.api.Do(ctx, req, &ws); err != nil {
			return nil, err
		}
		for i := range ws {
			msgs, authors = append(msgs, directMessage(&ws[i])), append(authors, userOf(&ws[i].Author))
		}
	}
	ids := make([]uint64, 0, len(msgs))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range msgs {
		if m.channelID != channelID {
			continue // the service answered for another channel; ignore it rather than mix caches
		}
		c.storeLocked(m, authors[i])
		ids = append(ids, m.id)
	}
	slices.Sort(ids)
	ch := c.channelLocked(channelID)
	ch.newest = max(ch.newest, len(ids))
	if len(msgs) < limit {
		ch.complete = true
	}
	return ids, nil
}

// cachedHistory returns the newest limit messages of a channel from the cache, oldest first,
// when the cache is known to hold them without a gap.
func (c *Client) cachedHistory(channelID uint64, limit int) ([]uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.msg.channels[channelID]
	if ch == nil || (!ch.complete && ch.newest < limit) {
		return nil, false
	}
	cutoff := c.clock.Now().Add(-MessageHistoryWindow)
	ids := ch.ids[max(0, len(ch.ids)-limit):]
	var out []uint64
	for _, id := range ids {
		if m := c.msg.byID[id]; m != nil && m.sent.After(cutoff) {
			out = append(out, id)
		}
	}
	return out, true
}

// GetLobbyMessagesWithLimit fetches the newest messages of a lobby the player is in, newest
// first: at most 200, from at most the last 72 hours (rule LIM-2).
func (c *Client) GetLobbyMessagesWithLimit(lobbyId uint64, limit int32, cb Callback[ClientGetLobbyMessagesCallback]) {
	auth, n, answer, ok := c.startHistory("GetLobbyMessagesWithLimit", limit, cb)
	if !ok {
		return
	}
	if c.GetLobbyHandle(lobbyId) == nil {
		answer(nil, invalid("the player is not in lobby %d", lobbyId))
		return
	}
	c.start(func(ctx context.Context) {
		answer(c.fetchHistory(ctx, auth, "/lobbies/"+strconv.FormatUint(lobbyId, 10)+"/messages", n, lobbyId, true))
	})
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
		once.Fire(func() { cb.Fn(Success(), c.handles(ids)) })
	}
	auth = c.authHeader()
	n, err := historyLimit(limit)
	if auth == "" {
		err = errNotReady
	}
	if err != nil {
		answer(nil, err)
		return "", 0, nil, false
	}
	return auth, n, answer, true
}

// dmChannel returns the DM channel with a user, opening it on the service the first time.
func (c *Client) dmChannel(ctx context.Context, auth string, recipientID uint64) (uint64, error) {
	c.mu.Lock()
	id := c.msg.dmChannels[recipientID]
	c.mu.Unlock()
	if id != 0 {
		return id, nil
	}
	var ch wire.DMChannel
	if err := c.api.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/users/@me/channels", Auth: auth,
		JSON: wire.CreateDMRequest{RecipientID: wire.Snowflake(recipientID)}}, &ch); err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.msg.dmChannels == nil {
		c.msg.dmChannels = map[uint64]uint64{}
	}
	for i := range ch.Recipients {
		if u := userOf(&ch.Recipients[i]); u != nil {
			c.cacheUserLocked(u)
		}
	}
	c.msg.dmChannels[recipientID] = uint64(ch.ID)
	return uint64(ch.ID), nil
}

// checkContent refuses content the service would refuse, before any request.
func checkContent(content string) error {
	if n := len([]rune(content)); n == 0 || n > wire.MaxMessageContentChars {
		return invalid("content must be 1 to %d characters, not %d", wire.MaxMessageContentChars, n)
	}
	return nil
}

// SendUserMessage sends a direct message.
func (c *Client) SendUserMessage(recipientId uint64, content string, cb Callback[ClientSendUserMessageCallback]) {
	c.SendUserMessageWithMetadata(recipientId, content, nil, cb)
}

// SendUserMessageWithMetadata sends a direct message with sender metadata.
func (c *Client) SendUserMessageWithMetadata(recipientId uint64, content string, metadata map[string]string, cb Callback[ClientSendUserMessageCallback]) {
	once := resultOnce1(c, cb)
	fail := func(err error) { once.Fire(func() { cb.Fn(resultOf(err), 0) }) }
	auth := c.authHeader()
	if auth == "" {
		fail(errNotReady)
		return
	}
	if err := checkContent(content); err != nil {
		fail(err)
		return
	}
	c.start(func(ctx context.Context) {
		ch, err := c.dmChannel(ctx, auth, recipientId)
		var w wire.Message
		if err == nil {
			err = c.api.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/channels/" + strconv.FormatUint(ch, 10) + "/messages",
				Auth: auth, JSON: wire.LobbyMessageRequest{Content: content, Metadata: metadata}}, &w)
		}
		if err != nil {
			c.logf(LoggingSeverityWarning, "SendUserMessage failed: %v", err)
			fail(err)
			return
		}
		c.mu.Lock()
		c.storeLocked(directMessage(&w), userOf(&w.Author))
		c.mu.Unlock()
		once.Fire(func() { cb.Fn(Success(), uint64(w.ID)) })
	})
}

// EditUserMessage replaces the content of a direct message the player sent.
func (c *Client) EditUserMessage(recipientId uint64, messageId uint64, content string, cb Callback[ClientEditUserMessageCallback]) {
	if err := checkContent(content); err != nil {
		c.failResult("EditUserMessage", Callback[func(*ClientResult)](cb), err)
		return
	}
	c.dmCall("EditUserMessage", recipientId, func(ch uint64) rest.Request {
		return rest.Request{Method: http.MethodPatch, Path: messagePath(ch, messageId), JSON: wire.MessageEditRequest{Content: &content}}
	}, Callback[func(*ClientResult)](cb), func(body []byte) {
		var w wire.Message
		if json.Unmarshal(body, &w) == nil && w.ID != 0 {
			c.mu.Lock()
			c.storeLocked(directMessage(&w), userOf(&w.Author))
			c.mu.Unlock()
		}
	})
}

// DeleteUserMessage deletes a direct message the player sent.
func (c *Client) DeleteUserMessage(recipientId uint64, messageId uint64, cb Callback[ClientDeleteUserMessageCallback]) {
	c.dmCall("DeleteUserMessage", recipientId, func(ch uint64) rest.Request {
		return rest.Request{Method: http.MethodDelete, Path: messagePath(ch, messageId)}
	}, Callback[func(*ClientResult)](cb), func([]byte) {
		c.mu.Lock()
		ch := c.msg.dmChannels[recipientId]
		c.mu.Unlock()
		c.forgetMessage(messageId, ch)
	})
}

func messagePath(channelID, messageID uint64) string {
	return "/channels/" + strconv.FormatUint(channelID, 10) + "/messages/" + strconv.FormatUint(messageID, 10)
}

// failResult fires a result-only callback with err at once.
func (c *Client) failResult(op string, cb Callback[func(*ClientResult)], err error) {
	c.logf(LoggingSeverityWarning, "%s: %v", op, err)
	once := resultOnce(c, cb)
	once.Fire(func() { cb.Fn(resultOf(err)) })
}

// dmCall runs a request on the DM channel with a user and fires a result-only callback; done
// runs with the response body on success, before the callback is queued.
func (c *Client) dmCall(op string, recipientID uint64, req func(channelID uint64) rest.Request, cb Callback[func(*ClientResult)], done func(body []byte)) {
	auth := c.authHeader()
	if auth == "" {
		c.failResult(op, cb, errNotReady)
		return
	}
	once := resultOnce(c, cb)
	c.start(func(ctx context.Context) {
		ch, err := c.dmChannel(ctx, auth, recipientID)
		var body json.RawMessage
		if err == nil {
			r := req(ch)
			r.Auth = auth
			err = c.api.Do(ctx, r, &body)
		}
		if err != nil {
			c.logf(LoggingSeverityWarning, "%s failed: %v", op, err)
		} else {
			done(body)
		}
		once.Fire(func() { cb.Fn(resultOf(err)) })
	})
}

// GetUserMessagesWithLimit returns the newest direct messages with a user, newest first: at most
// 200 from the last 72 hours (rule LIM-2). The local cache answers when it already holds them.
func (c *Client) GetUserMessagesWithLimit(recipientId uint64, limit int32, cb Callback[ClientUserMessagesWithLimitCallback]) {
	auth, n, answer, ok := c.startHistory("GetUserMessagesWithLimit", limit, cb)
	if !ok {
		return
	}
	c.mu.Lock()
	ch := c.msg.dmChannels[recipientId]
	c.mu.Unlock()
	if ch != 0 {
		if ids, ok := c.cachedHistory(ch, n); ok {
			c.logf(LoggingSeverityVerbose, "GetUserMessagesWithLimit: %d messages from the cache", len(ids))
			answer(ids, nil)
			return
		}
	}
	c.start(func(ctx context.Context) {
		ch, err := c.dmChannel(ctx, auth, recipientId)
		if err != nil {
			answer(nil, err)
			return
		}
		answer(c.fetchHistory(ctx, auth, "/channels/"+strconv.FormatUint(ch, 10)+"/messages", n, ch, false))
	})
}

// GetUserMessageSummaries lists the player's direct-message conversations, newest first.
func (c *Client) GetUserMessageSummaries(cb Callback[ClientUserMessageSummariesCallback]) {
	getList(c, "GetUserMessageSummaries", "/users/@me/channels", cb, func(chans []wire.DMChannel) []*UserMessageSummary {
		me := c.currentUserID()
		var out []*UserMessageSummary
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.msg.dmChannels == nil {
			c.msg.dmChannels = map[uint64]uint64{}
		}
		for _, ch := range chans {
			for i := range ch.Recipients {
				u := &ch.Recipients[i]
				if uint64(u.ID) == me || u.ID == 0 {
					continue
				}
				c.cacheUserLocked(userOf(u))
				c.msg.dmChannels[uint64(u.ID)] = uint64(ch.ID)
				if ch.LastMessageID != nil {
					out = append(out, &UserMessageSummary{userID: uint64(u.ID), lastMessageID: uint64(*ch.LastMessageID)})
				}
			}
		}
		slices.SortFunc(out, func(a, b *UserMessageSummary) int { return cmp.Compare(b.lastMessageID, a.lastMessageID) })
		return out
	})
}

// UserMessageSummary is one direct-message conversation: the other user and the newest message.
type UserMessageSummary struct {
	userID, lastMessageID uint64
}

// Clone returns a copy.
func (s *UserMessageSummary) Clone() *UserMessageSummary { v := *s; return &v }

// UserId returns the other user's id.
func (s *UserMessageSummary) UserId() uint64 { return s.userID }

// LastMessageId returns the id of the newest message.
func (s *UserMessageSummary) LastMessageId() uint64 { return s.lastMessageID }

// MessageHandle is a live view of a cached message.
type MessageHandle struct {
	c  *Client
	id uint64
}

// Clone returns another view of the same message.
func (h *MessageHandle) Clone() *MessageHandle { v := *h; return &v }

// message returns a copy of the cached message, or an empty one.
func (h *MessageHandle) message() message {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	m := h.c.msg.byID[h.id]
	if h.c.closed || m == nil {
		return message{}
	}
	return *m
}

// Id returns the message's id, 0 once it has left the cache.
func (h *MessageHandle) Id() uint64 { return h.message().id }

// Content returns the content as shown (sdkpp renders no markup: the content as sent).
func (h *MessageHandle) Content() string { return h.message().content }

// RawContent returns the content as sent.
func (h *MessageHandle) RawContent() string { return h.message().content }

// AuthorId returns the author's user id.
func (h *MessageHandle) AuthorId() uint64 { return h.message().authorID }

// Author returns the author, if the client knows the user.
func (h *MessageHandle) Author() *UserHandle { return h.c.GetUser(h.message().authorID) }

// ChannelId returns the lobby's id or the DM channel's id.
func (h *MessageHandle) ChannelId() uint64 { return h.message().channelID }

// RecipientId returns the recipient of a direct message, 0 for a lobby message.
func (h *MessageHandle) RecipientId() uint64 { return h.message().recipientID }

// Recipient returns the recipient of a direct message, if the client knows the user.
func (h *MessageHandle) Recipient() *UserHandle {
	id := h.message().recipientID
	if id == 0 {
		return nil
	}
	return h.c.GetUser(id)
}

// Lobby returns the lobby of a lobby message the player is still in.
func (h *MessageHandle) Lobby() *LobbyHandle {
	id := h.message().lobbyID
	if id == 0 {
		return nil
	}
	return h.c.GetLobbyHandle(id)
}

func unixMillis(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixMilli())
}

// SentTimestamp returns when the message was sent, in milliseconds since the Unix epoch.
func (h *MessageHandle) SentTimestamp() uint64 { return unixMillis(h.message().sent) }

// EditedTimestamp returns when the message was last edited, 0 if never.
func (h *MessageHandle) EditedTimestamp() uint64 { return unixMillis(h.message().edited) }

// SentFromGame reports whether a game's SDK sent the message.
func (h *MessageHandle) SentFromGame() bool { return h.message().appID != 0 }

// Metadata returns the sender's metadata.
func (h *MessageHandle) Metadata() map[string]string { return h.message().metadata }

// ModerationMetadata returns the moderation metadata set by the game's backend (rule MSG-3).
func (h *MessageHandle) ModerationMetadata() map[string]string { return h.message().moderation }

// ApplicationId returns the application that sent the message (rule MSG-1).
func (h *MessageHandle) ApplicationId() (uint64, bool) {
	id := h.message().appID
	return id, id != 0
}

// AdditionalName returns the author's extra display name in a lobby, set only by the game's
// backend (rule MSG-2).
func (h *MessageHandle) AdditionalName() (string, bool) { return optOf(h.message().additionalName) }
