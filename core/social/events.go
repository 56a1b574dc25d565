package social

import (
	"encoding/json"
	"fmt"

	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Events are the social dispatches of the gateway that Decode reads: the relationship events of
// both graphs (gwire.RelationshipEvents), APPLICATION_PROFILES_UPDATE, PRESENCE_UPDATE and the
// activity invites.
var Events = func() []string {
	out := []string{gwire.EventApplicationProfilesUpdate, gwire.EventPresenceUpdate,
		gwire.EventActivityInviteCreate, gwire.EventActivityInviteUpdate}
	for event := range gwire.RelationshipEvents {
		out = append(out, event)
	}
	return out
}()

// Event is a social dispatch, decoded and checked: one of Relationship (with what changed, of
// which graph), Profiles (a user with its game profiles), Presence or Invite.
type Event struct {
	Relationship *wire.Relationship
	Change       gwire.RelationshipEvent
	Profiles     *wire.User
	Presence     *wire.PresenceUpdate
	Invite       *wire.ActivityInvite
	// InviteCreated: the invite is new, or accepted on another device (rule EVT-1), rather than
	// updated.
	InviteCreated bool
}

// Decode decodes a social dispatch (Events). It fails for malformed data or a missing id.
func Decode(event string, data json.RawMessage) (Event, error) {
	var ev Event
	var v any
	var ok func() bool
	switch event {
	case gwire.EventApplicationProfilesUpdate:
		ev.Profiles = new(wire.User)
		v, ok = ev.Profiles, func() bool { return ev.Profiles.ID != 0 }
	case gwire.EventPresenceUpdate:
		ev.Presence = new(wire.PresenceUpdate)
		v, ok = ev.Presence, func() bool { return ev.Presence.User.ID != 0 }
	case gwire.EventActivityInviteCreate, gwire.EventActivityInviteUpdate:
		ev.Invite = new(wire.ActivityInvite)
		v, ok = ev.Invite, func() bool {
			ev.InviteCreated = event == gwire.EventActivityInviteCreate || ev.Invite.Accepted && ev.Invite.IsValid
			return ev.Invite.ID != 0
		}
	default:
		change, known := gwire.RelationshipEvents[event]
		if !known {
			return Event{}, fmt.Errorf("%s is not a social event", event)
		}
		ev.Relationship, ev.Change = new(wire.Relationship), change
		v, ok = ev.Relationship, func() bool { return ev.Relationship.ID != 0 }
	}
	if err := json.Unmarshal(data, v); err != nil || !ok() {
		return Event{}, fmt.Errorf("malformed %s", event)
	}
	return ev, nil
}
