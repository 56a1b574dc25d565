package core

import (
	"slices"

	"sdkpp/wire"
)

// Start returns the start time in Unix milliseconds.
func (a *ActivityTimestamps) Start() uint64 { return a.start }

// SetStart sets the start time; small values are taken as seconds.
func (a *ActivityTimestamps) SetStart(v uint64) { a.start = millis(v) }

// End returns the end time in Unix milliseconds.
func (a *ActivityTimestamps) End() uint64 { return a.end }

// SetEnd sets the end time; small values are taken as seconds.
func (a *ActivityTimestamps) SetEnd(v uint64) { a.end = millis(v) }

// millis reads values below 1e11 (before 1973 in milliseconds) as seconds.
func millis(v uint64) uint64 {
	if v != 0 && v < 100_000_000_000 {
		return v * 1000
	}
	return v
}

// Activity is rich presence: what the player is doing in the game.
type Activity struct {
	name                string
	typ                 ActivityTypes
	statusDisplayType   *StatusDisplayTypes
	state, stateUrl     *string
	details, detailsUrl *string
	applicationId       *uint64
	parentApplicationId *uint64
	assets              *ActivityAssets
	timestamps          *ActivityTimestamps
	party               *ActivityParty
	secrets             *ActivitySecrets
	buttons             []ActivityButton
	supportedPlatforms  ActivityGamePlatforms
}

// NewActivity returns an empty Playing activity.
func NewActivity() *Activity { return &Activity{} }

// Clone returns a deep copy.
func (a *Activity) Clone() *Activity {
	c := *a
	c.statusDisplayType = clonePtr(a.statusDisplayType)
	c.state, c.stateUrl = clonePtr(a.state), clonePtr(a.stateUrl)
	c.details, c.detailsUrl = clonePtr(a.details), clonePtr(a.detailsUrl)
	c.applicationId, c.parentApplicationId = clonePtr(a.applicationId), clonePtr(a.parentApplicationId)
	if a.assets != nil {
		c.assets = a.assets.Clone()
	}
	c.timestamps, c.party, c.secrets = clonePtr(a.timestamps), clonePtr(a.party), clonePtr(a.secrets)
	c.buttons = slices.Clone(a.buttons)
	return &c
}

// AddButton adds a link button (rule ACT-5); more than two are refused when the activity is set.
func (a *Activity) AddButton(b *ActivityButton) { a.buttons = append(a.buttons, *b) }

// GetButtons returns copies of the buttons.
func (a *Activity) GetButtons() []*ActivityButton {
	out := make([]*ActivityButton, len(a.buttons))
	for i := range a.buttons {
		out[i] = a.buttons[i].Clone()
	}
	return out
}

// Equals reports whether other has the same value in every field: name, type, status display
// type, state and details with their links, application ids, assets, timestamps, party, secrets,
// buttons (in order) and supported platforms. An absent optional field equals only an absent one.
func (a *Activity) Equals(other *Activity) bool {
	if other == nil {
		return false
	}
	return a.name == other.name && a.typ == other.typ && a.supportedPlatforms == other.supportedPlatforms &&
		equalPtr(a.statusDisplayType, other.statusDisplayType) &&
		equalPtr(a.state, other.state) && equalPtr(a.stateUrl, other.stateUrl) &&
		equalPtr(a.details, other.details) && equalPtr(a.detailsUrl, other.detailsUrl) &&
		equalPtr(a.applicationId, other.applicationId) && equalPtr(a.parentApplicationId, other.parentApplicationId) &&
		equalBy(a.assets, other.assets, (*ActivityAssets).equals) &&
		equalPtr(a.timestamps, other.timestamps) && equalPtr(a.party, other.party) &&
		equalPtr(a.secrets, other.secrets) && slices.Equal(a.buttons, other.buttons)
}

// equals reports whether b holds the same images, texts and links as a.
func (a *ActivityAssets) equals(b *ActivityAssets) bool {
	return equalPtr(a.largeImage, b.largeImage) && equalPtr(a.largeText, b.largeText) &&
		equalPtr(a.largeUrl, b.largeUrl) && equalPtr(a.smallImage, b.smallImage) &&
		equalPtr(a.smallText, b.smallText) && equalPtr(a.smallUrl, b.smallUrl) &&
		equalPtr(a.inviteCoverImage, b.inviteCoverImage)
}

// toWire is the activity as the service receives it.
func (a *Activity) toWire() wire.Activity {
	w := wire.Activity{Name: a.name, Type: int(a.typ), State: clonePtr(a.state), StateURL: clonePtr(a.stateUrl),
		Details: clonePtr(a.details), DetailsURL: clonePtr(a.detailsUrl), SupportedPlatforms: int(a.supportedPlatforms)}
	if a.statusDisplayType != nil {
		v := int(*a.statusDisplayType)
		w.StatusDisplayType = &v
	}
	if a.assets != nil {
		x := a.assets
		w.Assets = &wire.ActivityAssets{LargeImage: clonePtr(x.largeImage), LargeText: clonePtr(x.largeText),
			LargeURL: clonePtr(x.largeUrl), SmallImage: clonePtr(x.smallImage), SmallText: clonePtr(x.smallText),
			SmallURL: clonePtr(x.smallUrl), InviteCoverImage: clonePtr(x.inviteCoverImage)}
	}
	if a.timestamps != nil {
		w.Timestamps = &wire.ActivityTimestamps{Start: a.timestamps.start, End: a.timestamps.end}
	}
	if p := a.party; p != nil {
		w.Party = &wire.ActivityParty{ID: p.id, Privacy: int(p.privacy)}
		if p.currentSize != 0 || p.maxSize != 0 {
			w.Party.Size = []int{int(p.currentSize), int(p.maxSize)}
		}
	}
	if a.secrets != nil {
		w.Secrets = &wire.ActivitySecrets{Join: a.secrets.join}
	}
	for _, b := range a.buttons {
		w.Buttons = append(w.Buttons, wire.ActivityButton{Label: b.label, URL: b.url})
	}
	return w
}

// activityFromWire is an activity the service sent.
func activityFromWire(w wire.Activity) *Activity {
	a := &Activity{name: w.Name, typ: ActivityTypes(w.Type), state: clonePtr(w.State), stateUrl: clonePtr(w.StateURL),
		details: clonePtr(w.Details), detailsUrl: clonePtr(w.DetailsURL), supportedPlatforms: ActivityGamePlatforms(w.SupportedPlatforms)}
	if w.StatusDisplayType != nil {
		v := StatusDisplayTypes(*w.StatusDisplayType)
		a.statusDisplayType = &v
	}
	if w.ApplicationID != nil {
		v := uint64(*w.ApplicationID)
		a.applicationId = &v
	}
	if w.ParentApplicationID != nil {
		v := uint64(*w.ParentApplicationID)
		a.parentApplicationId = &v
	}
	if w.Assets != nil {
		x := w.Assets
		a.assets = &ActivityAssets{largeImage: clonePtr(x.LargeImage), largeText: clonePtr(x.LargeText),
			largeUrl: clonePtr(x.LargeURL), smallImage: clonePtr(x.SmallImage), smallText: clonePtr(x.SmallText),
			smallUrl: clonePtr(x.SmallURL), inviteCoverImage: clonePtr(x.InviteCoverImage)}
	}
	if w.Timestamps != nil {
		a.timestamps = &ActivityTimestamps{start: w.Timestamps.Start, end: w.Timestamps.End}
	}
	if p := w.Party; p != nil {
		a.party = &ActivityParty{id: p.ID, privacy: ActivityPartyPrivacy(p.Privacy)}
		if len(p.Size) == 2 {
			a.party.currentSize, a.party.maxSize = int32(p.Size[0]), int32(p.Size[1])
		}
	}
	if w.Secrets != nil {
		a.secrets = &ActivitySecrets{join: w.Secrets.Join}
	}
	for _, b := range w.Buttons {
		a.buttons = append(a.buttons, ActivityButton{label: b.Label, url: b.URL})
	}
	return a
}

// ActivityInvite is an invitation to a party, or a request to join one.
type ActivityInvite struct {
	senderId, channelId, messageId     uint64
	typ                                ActivityActionTypes
	applicationId, parentApplicationId uint64
	partyId, sessionId                 string
	isValid                            bool
	inviteID                           uint64 // the service's invite id (the message id)
}

// NewActivityInvite returns an empty invite.
func NewActivityInvite() *ActivityInvite { return &ActivityInvite{} }

// Clone returns a copy.
func (a *ActivityInvite) Clone() *ActivityInvite { v := *a; return &v }

func inviteFromWire(w wire.ActivityInvite) *ActivityInvite {
	i := &ActivityInvite{senderId: uint64(w.SenderID), channelId: uint64(w.ChannelID), messageId: uint64(w.MessageID),
		typ: ActivityActionTypes(w.Type), applicationId: uint64(w.ApplicationID), partyId: w.PartyID,
		sessionId: w.SessionID, isValid: w.IsValid, inviteID: uint64(w.ID)}
	if w.ParentApplicationID != nil {
		i.parentApplicationId = uint64(*w.ParentApplicationID)
	}
	return i
}

// id is the invite's id at the service: the message id.
func (a *ActivityInvite) id() uint64 {
	if a.inviteID != 0 {
		return a.inviteID
	}
	return a.messageId
}

// MessageId returns the invite message.
func (a *ActivityInvite) MessageId() uint64 { return a.messageId }

// SetMessageId sets the invite message.
func (a *ActivityInvite) SetMessageId(v uint64) { a.messageId, a.inviteID = v, 0 }
