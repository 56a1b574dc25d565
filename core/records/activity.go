package records

import (
	"slices"

	"sdkpp/core/internal/opt"
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
	c.statusDisplayType = opt.Clone(a.statusDisplayType)
	c.state, c.stateUrl = opt.Clone(a.state), opt.Clone(a.stateUrl)
	c.details, c.detailsUrl = opt.Clone(a.details), opt.Clone(a.detailsUrl)
	c.applicationId, c.parentApplicationId = opt.Clone(a.applicationId), opt.Clone(a.parentApplicationId)
	if a.assets != nil {
		c.assets = a.assets.Clone()
	}
	c.timestamps, c.party, c.secrets = opt.Clone(a.timestamps), opt.Clone(a.party), opt.Clone(a.secrets)
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
		opt.Equal(a.statusDisplayType, other.statusDisplayType) &&
		opt.Equal(a.state, other.state) && opt.Equal(a.stateUrl, other.stateUrl) &&
		opt.Equal(a.details, other.details) && opt.Equal(a.detailsUrl, other.detailsUrl) &&
		opt.Equal(a.applicationId, other.applicationId) && opt.Equal(a.parentApplicationId, other.parentApplicationId) &&
		opt.EqualBy(a.assets, other.assets, (*ActivityAssets).equals) &&
		opt.Equal(a.timestamps, other.timestamps) && opt.Equal(a.party, other.party) &&
		opt.Equal(a.secrets, other.secrets) && slices.Equal(a.buttons, other.buttons)
}

// equals reports whether b holds the same images, texts and links as a.
func (a *ActivityAssets) equals(b *ActivityAssets) bool {
	return opt.Equal(a.largeImage, b.largeImage) && opt.Equal(a.largeText, b.largeText) &&
		opt.Equal(a.largeUrl, b.largeUrl) && opt.Equal(a.smallImage, b.smallImage) &&
		opt.Equal(a.smallText, b.smallText) && opt.Equal(a.smallUrl, b.smallUrl) &&
		opt.Equal(a.inviteCoverImage, b.inviteCoverImage)
}

// ActivityToWire is the activity as the service receives it.
func ActivityToWire(a *Activity) wire.Activity {
	w := wire.Activity{Name: a.name, Type: int(a.typ), State: opt.Clone(a.state), StateURL: opt.Clone(a.stateUrl),
		Details: opt.Clone(a.details), DetailsURL: opt.Clone(a.detailsUrl), SupportedPlatforms: int(a.supportedPlatforms)}
	w.StatusDisplayType = opt.Convert[int](a.statusDisplayType)
	if a.assets != nil {
		x := a.assets
		w.Assets = &wire.ActivityAssets{LargeImage: opt.Clone(x.largeImage), LargeText: opt.Clone(x.largeText),
			LargeURL: opt.Clone(x.largeUrl), SmallImage: opt.Clone(x.smallImage), SmallText: opt.Clone(x.smallText),
			SmallURL: opt.Clone(x.smallUrl), InviteCoverImage: opt.Clone(x.inviteCoverImage)}
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

// ActivityFromWire is an activity the service sent.
func ActivityFromWire(w wire.Activity) *Activity {
	a := &Activity{name: w.Name, typ: ActivityTypes(w.Type), state: opt.Clone(w.State), stateUrl: opt.Clone(w.StateURL),
		details: opt.Clone(w.Details), detailsUrl: opt.Clone(w.DetailsURL), supportedPlatforms: ActivityGamePlatforms(w.SupportedPlatforms)}
	a.statusDisplayType = opt.Convert[StatusDisplayTypes](w.StatusDisplayType)
	a.applicationId, a.parentApplicationId = opt.Convert[uint64](w.ApplicationID), opt.Convert[uint64](w.ParentApplicationID)
	if w.Assets != nil {
		x := w.Assets
		a.assets = &ActivityAssets{largeImage: opt.Clone(x.LargeImage), largeText: opt.Clone(x.LargeText),
			largeUrl: opt.Clone(x.LargeURL), smallImage: opt.Clone(x.SmallImage), smallText: opt.Clone(x.SmallText),
			smallUrl: opt.Clone(x.SmallURL), inviteCoverImage: opt.Clone(x.InviteCoverImage)}
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

// InviteFromWire is an invite the service sent.
func InviteFromWire(w wire.ActivityInvite) *ActivityInvite {
	i := &ActivityInvite{senderId: uint64(w.SenderID), channelId: uint64(w.ChannelID), messageId: uint64(w.MessageID),
		typ: ActivityActionTypes(w.Type), applicationId: uint64(w.ApplicationID), partyId: w.PartyID,
		sessionId: w.SessionID, isValid: w.IsValid, inviteID: uint64(w.ID)}
	if w.ParentApplicationID != nil {
		i.parentApplicationId = uint64(*w.ParentApplicationID)
	}
	return i
}

// InviteID is the invite's id at the service: the message id.
func InviteID(a *ActivityInvite) uint64 {
	if a.inviteID != 0 {
		return a.inviteID
	}
	return a.messageId
}

// MessageId returns the invite message.
func (a *ActivityInvite) MessageId() uint64 { return a.messageId }

// SetMessageId sets the invite message.
func (a *ActivityInvite) SetMessageId(v uint64) { a.messageId, a.inviteID = v, 0 }
