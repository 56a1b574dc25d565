package core

import (
	"slices"

	"sdkpp/wire"
)

// The activity records hold the wire form of their part of an activity, so that what the game
// sets is what the service receives (rules ACT-2..ACT-5).

// ActivityButton is a link button of an activity.
type ActivityButton struct{ b wire.ActivityButton }

// NewActivityButton returns an empty button.
func NewActivityButton() *ActivityButton { return &ActivityButton{} }

// Clone returns a copy.
func (b *ActivityButton) Clone() *ActivityButton { v := *b; return &v }

// Label returns the button's text.
func (b *ActivityButton) Label() string { return b.b.Label }

// SetLabel sets the button's text.
func (b *ActivityButton) SetLabel(s string) { b.b.Label = s }

// Url returns the URL the button opens.
func (b *ActivityButton) Url() string { return b.b.URL }

// SetUrl sets the URL the button opens.
func (b *ActivityButton) SetUrl(s string) { b.b.URL = s }

// ActivityAssets are the images of an activity.
type ActivityAssets struct{ a wire.ActivityAssets }

// NewActivityAssets returns empty assets.
func NewActivityAssets() *ActivityAssets { return &ActivityAssets{} }

// Clone returns a deep copy.
func (a *ActivityAssets) Clone() *ActivityAssets { return &ActivityAssets{cloneAssets(a.a)} }

func cloneAssets(a wire.ActivityAssets) wire.ActivityAssets {
	return wire.ActivityAssets{LargeImage: clonePtr(a.LargeImage), LargeText: clonePtr(a.LargeText),
		LargeURL: clonePtr(a.LargeURL), SmallImage: clonePtr(a.SmallImage), SmallText: clonePtr(a.SmallText),
		SmallURL: clonePtr(a.SmallURL), InviteCoverImage: clonePtr(a.InviteCoverImage)}
}

// LargeImage returns the large image's asset key or URL.
func (a *ActivityAssets) LargeImage() (string, bool) { return optOf(a.a.LargeImage) }

// SetLargeImage sets the large image; nil clears it.
func (a *ActivityAssets) SetLargeImage(s *string) { a.a.LargeImage = clonePtr(s) }

// LargeText returns the large image's hover text.
func (a *ActivityAssets) LargeText() (string, bool) { return optOf(a.a.LargeText) }

// SetLargeText sets the large image's hover text; nil clears it.
func (a *ActivityAssets) SetLargeText(s *string) { a.a.LargeText = clonePtr(s) }

// LargeUrl returns the link on the large image (rule ACT-2).
func (a *ActivityAssets) LargeUrl() (string, bool) { return optOf(a.a.LargeURL) }

// SetLargeUrl sets the link on the large image; nil clears it.
func (a *ActivityAssets) SetLargeUrl(s *string) { a.a.LargeURL = clonePtr(s) }

// SmallImage returns the small image's asset key or URL.
func (a *ActivityAssets) SmallImage() (string, bool) { return optOf(a.a.SmallImage) }

// SetSmallImage sets the small image; nil clears it.
func (a *ActivityAssets) SetSmallImage(s *string) { a.a.SmallImage = clonePtr(s) }

// SmallText returns the small image's hover text.
func (a *ActivityAssets) SmallText() (string, bool) { return optOf(a.a.SmallText) }

// SetSmallText sets the small image's hover text; nil clears it.
func (a *ActivityAssets) SetSmallText(s *string) { a.a.SmallText = clonePtr(s) }

// SmallUrl returns the link on the small image (rule ACT-2).
func (a *ActivityAssets) SmallUrl() (string, bool) { return optOf(a.a.SmallURL) }

// SetSmallUrl sets the link on the small image; nil clears it.
func (a *ActivityAssets) SetSmallUrl(s *string) { a.a.SmallURL = clonePtr(s) }

// InviteCoverImage returns the invite banner (rule ACT-3).
func (a *ActivityAssets) InviteCoverImage() (string, bool) { return optOf(a.a.InviteCoverImage) }

// SetInviteCoverImage sets the invite banner; nil clears it (invites then show the
// application's cover image).
func (a *ActivityAssets) SetInviteCoverImage(s *string) { a.a.InviteCoverImage = clonePtr(s) }

// ActivityTimestamps are the timers of an activity.
type ActivityTimestamps struct{ t wire.ActivityTimestamps }

// NewActivityTimestamps returns no timers.
func NewActivityTimestamps() *ActivityTimestamps { return &ActivityTimestamps{} }

// Clone returns a copy.
func (t *ActivityTimestamps) Clone() *ActivityTimestamps { v := *t; return &v }

// Start returns the start time in Unix milliseconds.
func (t *ActivityTimestamps) Start() uint64 { return t.t.Start }

// SetStart sets the start time; small values are taken as seconds.
func (t *ActivityTimestamps) SetStart(v uint64) { t.t.Start = millis(v) }

// End returns the end time in Unix milliseconds.
func (t *ActivityTimestamps) End() uint64 { return t.t.End }

// SetEnd sets the end time; small values are taken as seconds.
func (t *ActivityTimestamps) SetEnd(v uint64) { t.t.End = millis(v) }

// millis reads values below 1e11 (before 1973 in milliseconds) as seconds.
func millis(v uint64) uint64 {
	if v != 0 && v < 100_000_000_000 {
		return v * 1000
	}
	return v
}

// ActivityParty is the player's party.
type ActivityParty struct {
	id           string
	current, max int32
	privacy      ActivityPartyPrivacy
}

// NewActivityParty returns an empty party.
func NewActivityParty() *ActivityParty { return &ActivityParty{} }

// Clone returns a copy.
func (p *ActivityParty) Clone() *ActivityParty { v := *p; return &v }

// Id returns the party id.
func (p *ActivityParty) Id() string { return p.id }

// SetId sets the party id.
func (p *ActivityParty) SetId(s string) { p.id = s }

// CurrentSize returns how many players are in the party.
func (p *ActivityParty) CurrentSize() int32 { return p.current }

// SetCurrentSize sets how many players are in the party.
func (p *ActivityParty) SetCurrentSize(n int32) { p.current = n }

// MaxSize returns the party's room; 0 shows no maximum.
func (p *ActivityParty) MaxSize() int32 { return p.max }

// SetMaxSize sets the party's room.
func (p *ActivityParty) SetMaxSize(n int32) { p.max = n }

// Privacy returns who may join.
func (p *ActivityParty) Privacy() ActivityPartyPrivacy { return p.privacy }

// SetPrivacy sets who may join.
func (p *ActivityParty) SetPrivacy(v ActivityPartyPrivacy) { p.privacy = v }

// ActivitySecrets are the secrets of an activity.
type ActivitySecrets struct{ join string }

// NewActivitySecrets returns no secrets.
func NewActivitySecrets() *ActivitySecrets { return &ActivitySecrets{} }

// Clone returns a copy.
func (s *ActivitySecrets) Clone() *ActivitySecrets { v := *s; return &v }

// Join returns the join secret.
func (s *ActivitySecrets) Join() string { return s.join }

// SetJoin sets the join secret.
func (s *ActivitySecrets) SetJoin(v string) {
	Secrets.Add(v)
	s.join = v
}

// Activity is rich presence: what the player is doing in the game.
type Activity struct {
	name               string
	typ                ActivityTypes
	statusDisplayType  *StatusDisplayTypes
	state, stateURL    *string
	details, detailURL *string
	applicationID      *uint64
	parentID           *uint64
	assets             *ActivityAssets
	timestamps         *ActivityTimestamps
	party              *ActivityParty
	secrets            *ActivitySecrets
	buttons            []ActivityButton
	platforms          ActivityGamePlatforms
}

// NewActivity returns an empty Playing activity.
func NewActivity() *Activity { return &Activity{} }

// Clone returns a deep copy.
func (a *Activity) Clone() *Activity {
	c := *a
	c.statusDisplayType = clonePtr(a.statusDisplayType)
	c.state, c.stateURL = clonePtr(a.state), clonePtr(a.stateURL)
	c.details, c.detailURL = clonePtr(a.details), clonePtr(a.detailURL)
	c.applicationID, c.parentID = clonePtr(a.applicationID), clonePtr(a.parentID)
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
	return a.name == other.name && a.typ == other.typ && a.platforms == other.platforms &&
		equalPtr(a.statusDisplayType, other.statusDisplayType) &&
		equalPtr(a.state, other.state) && equalPtr(a.stateURL, other.stateURL) &&
		equalPtr(a.details, other.details) && equalPtr(a.detailURL, other.detailURL) &&
		equalPtr(a.applicationID, other.applicationID) && equalPtr(a.parentID, other.parentID) &&
		equalBy(a.assets, other.assets, (*ActivityAssets).equals) &&
		equalPtr(a.timestamps, other.timestamps) && equalPtr(a.party, other.party) &&
		equalPtr(a.secrets, other.secrets) && slices.Equal(a.buttons, other.buttons)
}

// equals reports whether b holds the same images, texts and links as a.
func (a *ActivityAssets) equals(b *ActivityAssets) bool {
	x, y := a.a, b.a
	return equalPtr(x.LargeImage, y.LargeImage) && equalPtr(x.LargeText, y.LargeText) &&
		equalPtr(x.LargeURL, y.LargeURL) && equalPtr(x.SmallImage, y.SmallImage) &&
		equalPtr(x.SmallText, y.SmallText) && equalPtr(x.SmallURL, y.SmallURL) &&
		equalPtr(x.InviteCoverImage, y.InviteCoverImage)
}

// Name returns the displayed name; empty shows the application's (rule ACT-4).
func (a *Activity) Name() string { return a.name }

// SetName sets the displayed name.
func (a *Activity) SetName(s string) { a.name = s }

// Type returns the kind of activity (rule ACT-1: CustomStatus is 4).
func (a *Activity) Type() ActivityTypes { return a.typ }

// SetType sets the kind of activity.
func (a *Activity) SetType(t ActivityTypes) { a.typ = t }

// StatusDisplayType returns which field feeds the status line.
func (a *Activity) StatusDisplayType() (StatusDisplayTypes, bool) { return optOf(a.statusDisplayType) }

// SetStatusDisplayType sets which field feeds the status line; nil clears it.
func (a *Activity) SetStatusDisplayType(t *StatusDisplayTypes) { a.statusDisplayType = clonePtr(t) }

// State returns the party state.
func (a *Activity) State() (string, bool) { return optOf(a.state) }

// SetState sets the party state; nil clears it.
func (a *Activity) SetState(s *string) { a.state = clonePtr(s) }

// StateUrl returns the link on the state text (rule ACT-2).
func (a *Activity) StateUrl() (string, bool) { return optOf(a.stateURL) }

// SetStateUrl sets the link on the state text; nil clears it.
func (a *Activity) SetStateUrl(s *string) { a.stateURL = clonePtr(s) }

// Details returns what the player is doing.
func (a *Activity) Details() (string, bool) { return optOf(a.details) }

// SetDetails sets what the player is doing; nil clears it.
func (a *Activity) SetDetails(s *string) { a.details = clonePtr(s) }

// DetailsUrl returns the link on the details text (rule ACT-2).
func (a *Activity) DetailsUrl() (string, bool) { return optOf(a.detailURL) }

// SetDetailsUrl sets the link on the details text; nil clears it.
func (a *Activity) SetDetailsUrl(s *string) { a.detailURL = clonePtr(s) }

// ApplicationId returns the game of the activity, as the service filled it in.
func (a *Activity) ApplicationId() (uint64, bool) { return optOf(a.applicationID) }

// SetApplicationId sets the game (the service overrides it).
func (a *Activity) SetApplicationId(v *uint64) { a.applicationID = clonePtr(v) }

// ParentApplicationId returns the publisher's parent application.
func (a *Activity) ParentApplicationId() (uint64, bool) { return optOf(a.parentID) }

// SetParentApplicationId sets the parent application (the service overrides it).
func (a *Activity) SetParentApplicationId(v *uint64) { a.parentID = clonePtr(v) }

// Assets returns a copy of the images, or nil.
func (a *Activity) Assets() *ActivityAssets {
	if a.assets == nil {
		return nil
	}
	return a.assets.Clone()
}

// SetAssets sets a copy of the images; nil clears them.
func (a *Activity) SetAssets(v *ActivityAssets) {
	a.assets = nil
	if v != nil {
		a.assets = v.Clone()
	}
}

// Timestamps returns a copy of the timers, or nil.
func (a *Activity) Timestamps() *ActivityTimestamps { return clonePtr(a.timestamps) }

// SetTimestamps sets a copy of the timers; nil clears them.
func (a *Activity) SetTimestamps(v *ActivityTimestamps) { a.timestamps = clonePtr(v) }

// Party returns a copy of the party, or nil.
func (a *Activity) Party() *ActivityParty { return clonePtr(a.party) }

// SetParty sets a copy of the party; nil clears it.
func (a *Activity) SetParty(v *ActivityParty) { a.party = clonePtr(v) }

// Secrets returns a copy of the secrets, or nil.
func (a *Activity) Secrets() *ActivitySecrets { return clonePtr(a.secrets) }

// SetSecrets sets a copy of the secrets; nil clears them.
func (a *Activity) SetSecrets(v *ActivitySecrets) { a.secrets = clonePtr(v) }

// SupportedPlatforms returns where the activity can be joined from.
func (a *Activity) SupportedPlatforms() ActivityGamePlatforms { return a.platforms }

// SetSupportedPlatforms sets where the activity can be joined from.
func (a *Activity) SetSupportedPlatforms(p ActivityGamePlatforms) { a.platforms = p }

// toWire is the activity as the service receives it.
func (a *Activity) toWire() wire.Activity {
	w := wire.Activity{Name: a.name, Type: int(a.typ), State: clonePtr(a.state), StateURL: clonePtr(a.stateURL),
		Details: clonePtr(a.details), DetailsURL: clonePtr(a.detailURL), SupportedPlatforms: int(a.platforms)}
	if a.statusDisplayType != nil {
		v := int(*a.statusDisplayType)
		w.StatusDisplayType = &v
	}
	if a.assets != nil {
		as := cloneAssets(a.assets.a)
		w.Assets = &as
	}
	if a.timestamps != nil {
		t := a.timestamps.t
		w.Timestamps = &t
	}
	if p := a.party; p != nil {
		w.Party = &wire.ActivityParty{ID: p.id, Privacy: int(p.privacy)}
		if p.current != 0 || p.max != 0 {
			w.Party.Size = []int{int(p.current), int(p.max)}
		}
	}
	if a.secrets != nil {
		w.Secrets = &wire.ActivitySecrets{Join: a.secrets.join}
	}
	for _, b := range a.buttons {
		w.Buttons = append(w.Buttons, b.b)
	}
	return w
}

// activityFromWire is an activity the service sent.
func activityFromWire(w wire.Activity) *Activity {
	a := &Activity{name: w.Name, typ: ActivityTypes(w.Type), state: clonePtr(w.State), stateURL: clonePtr(w.StateURL),
		details: clonePtr(w.Details), detailURL: clonePtr(w.DetailsURL), platforms: ActivityGamePlatforms(w.SupportedPlatforms)}
	if w.StatusDisplayType != nil {
		v := StatusDisplayTypes(*w.StatusDisplayType)
		a.statusDisplayType = &v
	}
	if w.ApplicationID != nil {
		v := uint64(*w.ApplicationID)
		a.applicationID = &v
	}
	if w.ParentApplicationID != nil {
		v := uint64(*w.ParentApplicationID)
		a.parentID = &v
	}
	if w.Assets != nil {
		a.assets = &ActivityAssets{cloneAssets(*w.Assets)}
	}
	if w.Timestamps != nil {
		a.timestamps = &ActivityTimestamps{*w.Timestamps}
	}
	if p := w.Party; p != nil {
		a.party = &ActivityParty{id: p.ID, privacy: ActivityPartyPrivacy(p.Privacy)}
		if len(p.Size) == 2 {
			a.party.current, a.party.max = int32(p.Size[0]), int32(p.Size[1])
		}
	}
	if w.Secrets != nil {
		a.secrets = &ActivitySecrets{join: w.Secrets.Join}
	}
	for _, b := range w.Buttons {
		a.buttons = append(a.buttons, ActivityButton{b})
	}
	return a
}

// ActivityInvite is an invitation to a party, or a request to join one.
type ActivityInvite struct {
	senderID, channelID, messageID uint64
	typ                            ActivityActionTypes
	applicationID, parentID        uint64
	partyID, sessionID             string
	isValid                        bool
	inviteID                       uint64 // the service's invite id (the message id)
}

// NewActivityInvite returns an empty invite.
func NewActivityInvite() *ActivityInvite { return &ActivityInvite{} }

// Clone returns a copy.
func (i *ActivityInvite) Clone() *ActivityInvite { v := *i; return &v }

func inviteFromWire(w wire.ActivityInvite) *ActivityInvite {
	i := &ActivityInvite{senderID: uint64(w.SenderID), channelID: uint64(w.ChannelID), messageID: uint64(w.MessageID),
		typ: ActivityActionTypes(w.Type), applicationID: uint64(w.ApplicationID), partyID: w.PartyID,
		sessionID: w.SessionID, isValid: w.IsValid, inviteID: uint64(w.ID)}
	if w.ParentApplicationID != nil {
		i.parentID = uint64(*w.ParentApplicationID)
	}
	return i
}

// id is the invite's id at the service: the message id.
func (i *ActivityInvite) id() uint64 {
	if i.inviteID != 0 {
		return i.inviteID
	}
	return i.messageID
}

// SenderId returns who sent the invite.
func (i *ActivityInvite) SenderId() uint64 { return i.senderID }

// SetSenderId sets who sent the invite.
func (i *ActivityInvite) SetSenderId(v uint64) { i.senderID = v }

// ChannelId returns the channel of the invite message.
func (i *ActivityInvite) ChannelId() uint64 { return i.channelID }

// SetChannelId sets the channel of the invite message.
func (i *ActivityInvite) SetChannelId(v uint64) { i.channelID = v }

// MessageId returns the invite message.
func (i *ActivityInvite) MessageId() uint64 { return i.messageID }

// SetMessageId sets the invite message.
func (i *ActivityInvite) SetMessageId(v uint64) { i.messageID, i.inviteID = v, 0 }

// Type returns Join or JoinRequest.
func (i *ActivityInvite) Type() ActivityActionTypes { return i.typ }

// SetType sets Join or JoinRequest.
func (i *ActivityInvite) SetType(v ActivityActionTypes) { i.typ = v }

// ApplicationId returns the game the invite is for (rule INV-1).
func (i *ActivityInvite) ApplicationId() uint64 { return i.applicationID }

// SetApplicationId sets the game the invite is for.
func (i *ActivityInvite) SetApplicationId(v uint64) { i.applicationID = v }

// ParentApplicationId returns the publisher's parent application.
func (i *ActivityInvite) ParentApplicationId() uint64 { return i.parentID }

// SetParentApplicationId sets the publisher's parent application.
func (i *ActivityInvite) SetParentApplicationId(v uint64) { i.parentID = v }

// PartyId returns the party the invite is for.
func (i *ActivityInvite) PartyId() string { return i.partyID }

// SetPartyId sets the party the invite is for.
func (i *ActivityInvite) SetPartyId(v string) { i.partyID = v }

// SessionId returns the sender's session.
func (i *ActivityInvite) SessionId() string { return i.sessionID }

// SetSessionId sets the sender's session.
func (i *ActivityInvite) SetSessionId(v string) { i.sessionID = v }

// IsValid reports whether the invite can still be accepted.
func (i *ActivityInvite) IsValid() bool { return i.isValid }

// SetIsValid sets the validity.
func (i *ActivityInvite) SetIsValid(v bool) { i.isValid = v }
