package lobbies

import (
	"encoding/json"
	"fmt"

	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Events are the lobby dispatches of the gateway that Decode reads.
var Events = []string{gwire.EventLobbyCreate, gwire.EventLobbyUpdate, gwire.EventLobbyDelete,
	gwire.EventLobbyMemberAdd, gwire.EventLobbyMemberUpdate, gwire.EventLobbyMemberRemove}

// memberKinds are the member change of each member event.
var memberKinds = map[string]int{gwire.EventLobbyMemberAdd: MemberAdded,
	gwire.EventLobbyMemberUpdate: MemberUpdated, gwire.EventLobbyMemberRemove: MemberRemoved}

// Event is a lobby dispatch, decoded and checked: one of Lobby (created or updated), Deleted, or
// Member (with its MemberKind).
type Event struct {
	Lobby      *wire.Lobby
	Created    bool
	Deleted    *wire.LobbyDeleted
	Member     *wire.LobbyMemberEvent
	MemberKind int // MemberAdded, MemberUpdated or MemberRemoved
}

// Decode decodes a lobby dispatch (Events). It fails for malformed data.
func Decode(event string, data json.RawMessage) (Event, error) {
	var ev Event
	var err error
	switch event {
	case gwire.EventLobbyCreate, gwire.EventLobbyUpdate:
		ev.Lobby, ev.Created = new(wire.Lobby), event == gwire.EventLobbyCreate
		if err = json.Unmarshal(data, ev.Lobby); err == nil && ev.Lobby.ID == 0 {
			err = fmt.Errorf("no lobby id")
		}
	case gwire.EventLobbyDelete:
		ev.Deleted = new(wire.LobbyDeleted)
		err = json.Unmarshal(data, ev.Deleted)
	default:
		kind, ok := memberKinds[event]
		if !ok {
			return Event{}, fmt.Errorf("%s is not a lobby event", event)
		}
		ev.Member, ev.MemberKind = new(wire.LobbyMemberEvent), kind
		if err = json.Unmarshal(data, ev.Member); err == nil && ev.Member.LobbyID == 0 {
			err = fmt.Errorf("no lobby id")
		}
	}
	if err != nil {
		return Event{}, fmt.Errorf("malformed %s: %w", event, err)
	}
	return ev, nil
}
