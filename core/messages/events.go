package messages

import (
	"encoding/json"
	"fmt"
	"slices"

	"sdkpp/core/users"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Events are the message dispatches of the gateway that Decode reads.
var Events = []string{wire.EventLobbyMessageCreate, wire.EventLobbyMessageUpdate,
	gwire.EventMessageCreate, gwire.EventMessageUpdate, gwire.EventMessageDelete}

// Event is a message dispatch of the gateway, decoded and checked: a lobby or direct message
// created or updated (Message and its Author), or a message deleted (ID and ChannelID).
type Event struct {
	Created, Deleted bool
	Message          *Message
	Author           *users.User
	ID, ChannelID    uint64
}

// Checks reports whether Decode checks the data of event, one of Events, as it does for each:
// it fails on what is not valid JSON (gateway.Config's DataChecked).
func Checks(event string) bool { return slices.Contains(Events, event) }

// Decode decodes a message dispatch (Events): LOBBY_MESSAGE_CREATE and _UPDATE, and
// MESSAGE_CREATE, _UPDATE and _DELETE. It fails for malformed data.
func Decode(event string, data json.RawMessage) (Event, error) {
	malformed := func() (Event, error) { return Event{}, fmt.Errorf("malformed %s", event) } // only when it is
	ev := Event{Created: event == wire.EventLobbyMessageCreate || event == gwire.EventMessageCreate}
	switch event {
	case wire.EventLobbyMessageCreate, wire.EventLobbyMessageUpdate:
		var w wire.LobbyMessage
		if err := wire.DecodeLobbyMessage(data, &w); err != nil || w.ID == 0 || w.LobbyID == 0 {
			return malformed()
		}
		ev.Message, ev.Author = withAuthor(lobbyMessage(&w), &w.Author)
	case gwire.EventMessageCreate, gwire.EventMessageUpdate:
		var w wire.Message
		if err := json.Unmarshal(data, &w); err != nil || w.ID == 0 || w.ChannelID == 0 {
			return malformed()
		}
		ev.Message, ev.Author = FromDirect(&w), users.Of(&w.Author)
	case gwire.EventMessageDelete:
		var d wire.MessageDelete
		if err := json.Unmarshal(data, &d); err != nil || d.ID == 0 {
			return malformed()
		}
		ev.Deleted, ev.ID, ev.ChannelID = true, uint64(d.ID), uint64(d.ChannelID)
	default:
		return Event{}, fmt.Errorf("%s is not a message event", event)
	}
	return ev, nil
}

// withAuthor returns m and its author u (nil when there is none, as users.Of) in one allocation:
// a lobby member's client decodes every message of its lobbies, and the author was an allocation
// per message of its own. The author stays in memory as long as the message does.
func withAuthor(m Message, u *wire.User) (*Message, *users.User) {
	p := &struct {
		m Message
		u users.User
	}{m: m}
	var ok bool
	if p.u, ok = users.ValueOf(u); !ok {
		return &p.m, nil
	}
	return &p.m, &p.u
}

// NoteDirect remembers the DM channel of a direct message's other party; self is the player. A
// lobby message has none.
func (c *Cache) NoteDirect(m *Message, self uint64) {
	if m.LobbyID != 0 {
		return
	}
	other := m.RecipientID
	if other == self {
		other = m.AuthorID
	}
	c.SetDMChannel(other, m.ChannelID)
}
