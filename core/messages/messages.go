// Package messages is the client's message cache: the newest messages of each channel (direct
// or lobby) with what is known of their history, the DM channel of each user, and the
// bookkeeping that delivers each live message once and in order, across catch-ups after a new
// gateway session, and that catch-up itself (catchup.go): after a new session it fetches what
// each lobby missed and delivers it through the Client's live path.
package messages

import (
	"slices"
	"sync"
	"time"

	"sdkpp/core/users"
	"sdkpp/wire"
)

// CacheSize is how many of the newest messages of each channel the cache keeps.
const CacheSize = 500

// Message is a cached message, direct or in a lobby.
type Message struct {
	ID, ChannelID, LobbyID uint64
	AuthorID, RecipientID  uint64
	AppID                  uint64 // 0 when unknown
	Content                string
	Sent, Edited           time.Time
	Metadata, Moderation   map[string]string
	AdditionalName         *string
}

// UnixMillis is t in Unix milliseconds, 0 for the zero time (a message never edited).
func UnixMillis(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixMilli())
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

// FromLobby converts a lobby message of the service.
func FromLobby(w *wire.LobbyMessage) *Message {
	m := lobbyMessage(w)
	return &m
}

// lobbyMessage is FromLobby as a value.
func lobbyMessage(w *wire.LobbyMessage) Message {
	return Message{ID: uint64(w.ID), ChannelID: uint64(w.LobbyID), LobbyID: uint64(w.LobbyID), AuthorID: uint64(w.Author.ID),
		AppID: uint64(w.ApplicationID), Content: w.Content, Sent: timeOf(&w.Timestamp), Edited: timeOf(w.EditedTimestamp),
		Metadata: w.Metadata, Moderation: w.ModerationMetadata, AdditionalName: w.LobbyMember.AdditionalName}
}

// FromDirect converts a direct message of the service.
func FromDirect(w *wire.Message) *Message {
	return &Message{ID: uint64(w.ID), ChannelID: uint64(w.ChannelID), AuthorID: uint64(w.Author.ID), RecipientID: uint64(w.RecipientID),
		AppID: uint64(w.ApplicationID), Content: w.Content, Sent: timeOf(&w.Timestamp), Edited: timeOf(w.EditedTimestamp),
		Metadata: w.Metadata, Moderation: w.ModerationMetadata}
}

// channelLog is what the cache knows of one channel's messages.
type channelLog struct {
	ids []uint64 // cached message ids, oldest first, at most CacheSize
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

// Held is a live lobby message waiting for its lobby's catch-up, with its author.
type Held struct {
	M      *Message
	Author *users.User
}

// Cache is the message cache; its methods may be called from any goroutine. Its lock is a leaf:
// no other lock is taken while it is held.
type Cache struct {
	mu       sync.Mutex
	byID     map[uint64]*Message
	channels map[uint64]*channelLog
	dm       map[uint64]uint64 // recipient id → DM channel id

	gen  uint64            // the gateway session's number: a catch-up of an older one gives way
	held map[uint64][]Held // lobby id → live messages held; a lobby is catching up while present
}

// channelLocked returns the log of a channel, making it.
func (c *Cache) channelLocked(id uint64) *channelLog {
	if c.channels == nil {
		c.channels = map[uint64]*channelLog{}
	}
	ch := c.channels[id]
	if ch == nil {
		ch = &channelLog{}
		c.channels[id] = ch
	}
	return ch
}

// storeLocked puts m into the cache, replacing an older copy, and reports whether it was new.
func (c *Cache) storeLocked(m *Message) bool {
	if c.byID == nil {
		c.byID = map[uint64]*Message{}
	}
	_, known := c.byID[m.ID]
	c.byID[m.ID] = m
	if known {
		return false
	}
	ch := c.channelLocked(m.ChannelID)
	i, _ := slices.BinarySearch(ch.ids, m.ID)
	ch.ids = slices.Insert(ch.ids, i, m.ID)
	if len(ch.ids) > CacheSize {
		drop := len(ch.ids) - CacheSize
		for _, id := range ch.ids[:drop] {
			delete(c.byID, id)
		}
		ch.ids = slices.Delete(ch.ids, 0, drop)
		ch.complete = false
		ch.newest = min(ch.newest, len(ch.ids))
	}
	return true
}

// Store puts m into the cache (a message the player sent, or an edit), replacing an older copy.
func (c *Cache) Store(m *Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.storeLocked(m)
}

// Created caches a message that arrived live (a dispatch, or a message fetched to catch up
// after a new session) and reports whether it is to be delivered to the game: exactly once per
// message and in id order per channel, so a message not newer than the last one delivered is
// dropped.
func (c *Cache) Created(m *Message) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.channelLocked(m.ChannelID)
	if m.ID <= ch.lastCreated {
		return false
	}
	ch.lastCreated = m.ID
	if c.storeLocked(m) && ch.newest > 0 {
		ch.newest++ // a live message extends the gap-free window at its newest end
	}
	return true
}

// Forget removes a message from the cache.
func (c *Cache) Forget(id, channelID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, id)
	if ch := c.channels[channelID]; ch != nil {
		if i, found := slices.BinarySearch(ch.ids, id); found {
			ch.ids = slices.Delete(ch.ids, i, i+1)
			ch.newest = min(ch.newest, len(ch.ids))
		}
	}
}

// Get returns a copy of a cached message.
func (c *Cache) Get(id uint64) (Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.byID[id]
	if m == nil {
		return Message{}, false
	}
	return *m, true
}

// StoreHistory caches the answer to a history request of a channel for its newest limit
// messages, and returns their ids, oldest first; messages of other channels are ignored rather
// than mixed in. An answer shorter than limit is the whole history window.
func (c *Cache) StoreHistory(channelID uint64, msgs []*Message, limit int) []uint64 {
	ids := make([]uint64, 0, len(msgs))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		if m.ChannelID != channelID {
			continue
		}
		c.storeLocked(m)
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	ch := c.channelLocked(channelID)
	ch.newest = max(ch.newest, len(ids))
	if len(msgs) < limit {
		ch.complete = true
	}
	return ids
}

// History returns the newest limit messages of a channel sent after cutoff, oldest first, when
// the cache is known to hold them without a gap.
func (c *Cache) History(channelID uint64, limit int, cutoff time.Time) ([]uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.channels[channelID]
	if ch == nil || (!ch.complete && ch.newest < limit) {
		return nil, false
	}
	var out []uint64
	for _, id := range ch.ids[max(0, len(ch.ids)-limit):] {
		if m := c.byID[id]; m != nil && m.Sent.After(cutoff) {
			out = append(out, id)
		}
	}
	return out, true
}

// DMChannel returns the DM channel with a user, 0 when unknown.
func (c *Cache) DMChannel(userID uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dm[userID]
}

// SetDMChannel records the DM channel with a user.
func (c *Cache) SetDMChannel(userID, channelID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dm == nil {
		c.dm = map[uint64]uint64{}
	}
	c.dm[userID] = channelID
}

// NoteLobby records the newest message of a lobby when the client first learns of it, where a
// catch-up starts when no message of it was delivered yet.
func (c *Cache) NoteLobby(lobbyID uint64, lastMessageID *wire.Snowflake) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.channelLocked(lobbyID); !ch.hasBaseline {
		ch.hasBaseline = true
		if lastMessageID != nil {
			ch.baseline = uint64(*lastMessageID)
		}
	}
}

// NewSession starts a new gateway session: no cached history is known to be gap-free any more,
// and of the given lobbies, those with a known last message start catching up (their live
// messages are held until FinishCatchUp). It returns the session's number and the lobbies to
// catch up, in order.
func (c *Cache) NewSession(lobbyIDs []uint64) (gen uint64, todo []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.channels {
		ch.newest, ch.complete = 0, false
	}
	c.gen++
	if c.held == nil {
		c.held = map[uint64][]Held{}
	}
	for _, id := range lobbyIDs {
		ch := c.channels[id]
		if ch == nil || (ch.lastCreated == 0 && !ch.hasBaseline) {
			continue
		}
		todo = append(todo, id)
		if _, catching := c.held[id]; !catching {
			c.held[id] = []Held{} // keeps what an interrupted catch-up held
		}
	}
	slices.Sort(todo)
	return c.gen, todo
}

// CatchUpFrom is the id after which a lobby's missed messages start: the last one delivered, or
// the lobby's newest message when the client first saw it.
func (c *Cache) CatchUpFrom(lobbyID uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.channels[lobbyID]; ch != nil {
		return max(ch.lastCreated, ch.baseline)
	}
	return 0
}

// Hold holds a live lobby message while its lobby catches up, and reports whether it did.
func (c *Cache) Hold(h Held) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	list, catching := c.held[h.M.LobbyID]
	if catching {
		c.held[h.M.LobbyID] = append(list, h)
	}
	return catching
}

// Current tells whether gen is still the newest session.
func (c *Cache) Current(gen uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen == gen
}

// TakeHeld returns the live messages held for a lobby, in arrival order, leaving none held. When
// none is held, the lobby's catch-up ends (live messages go straight through from then on) and
// done is true. ok is false when a newer session took over.
func (c *Cache) TakeHeld(gen, lobbyID uint64) (list []Held, done, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return nil, false, false
	}
	list = c.held[lobbyID]
	if len(list) == 0 {
		delete(c.held, lobbyID)
		return nil, true, true
	}
	c.held[lobbyID] = []Held{}
	return list, false, true
}
