package wire

import (
	"fmt"
	"net/url"
	"unicode/utf8"
)

// Error codes of the relationship and invite endpoints (the platform's).
const (
	CodeCannotSendToUser     = 50007 // blocked, or the recipient does not accept requests
	CodeFriendRequestBlocked = 80000 // the recipient blocks the sender
	CodeAlreadyFriends       = 80007
	CodeNoRelationshipChange = 80004 // no pending request to accept, reject or cancel
)

// Relationship is a relationship object: what the user with id is to the caller. In
// game_relationships (and the GAME_RELATIONSHIP_* events) it is the in-game relationship of
// application_id.
type Relationship struct {
	ID            Snowflake  `json:"id"`
	Type          int        `json:"type"` // None 0, Friend 1, Blocked 2, PendingIncoming 3, PendingOutgoing 4
	User          User       `json:"user"`
	Nickname      *string    `json:"nickname"`
	IsSpamRequest bool       `json:"is_spam_request"` // rule REL-1
	Since         string     `json:"since"`           // RFC 3339
	ApplicationID *Snowflake `json:"application_id,omitempty"`
}

// FriendRequest is the body of POST /users/@me/relationships and /users/@me/game-relationships.
type FriendRequest struct {
	Username string `json:"username"`
}

// RelationshipPut is the body of PUT /users/@me/relationships/{user_id}: type 2 blocks, type 1
// or no type sends or accepts a friend request.
type RelationshipPut struct {
	Type *int `json:"type"`
}

// PrivacySettings is the body of PATCH /users/@me/settings and its answer.
type PrivacySettings struct {
	// CustomStatusPrivacy: 0 everyone, 1 friends only, 2 friends and small servers only (rule GW-5).
	CustomStatusPrivacy *int `json:"custom_status_privacy"`
}

// Activity types (rule ACT-1: 4 is a custom status).
const (
	ActivityPlaying      = 0
	ActivityStreaming    = 1
	ActivityListening    = 2
	ActivityWatching     = 3
	ActivityCustomStatus = 4
	ActivityCompeting    = 5
	ActivityHangStatus   = 6
)

// Activity is a rich presence activity as the platform serializes it (rules ACT-1..ACT-4).
type Activity struct {
	Name                string              `json:"name"` // overrides the application's name (ACT-4)
	Type                int                 `json:"type"`
	URL                 *string             `json:"url,omitempty"`
	CreatedAt           int64               `json:"created_at,omitempty"`
	Timestamps          *ActivityTimestamps `json:"timestamps,omitempty"`
	ApplicationID       *Snowflake          `json:"application_id,omitempty"`
	ParentApplicationID *Snowflake          `json:"parent_application_id,omitempty"`
	StatusDisplayType   *int                `json:"status_display_type,omitempty"`
	Details             *string             `json:"details,omitempty"`
	DetailsURL          *string             `json:"details_url,omitempty"` // ACT-2
	State               *string             `json:"state,omitempty"`
	StateURL            *string             `json:"state_url,omitempty"` // ACT-2
	Party               *ActivityParty      `json:"party,omitempty"`
	Assets              *ActivityAssets     `json:"assets,omitempty"`
	Secrets             *ActivitySecrets    `json:"secrets,omitempty"`
	Buttons             []ActivityButton    `json:"buttons,omitempty"`
	SupportedPlatforms  int                 `json:"supported_platforms,omitempty"`
}

// ActivityTimestamps are Unix milliseconds.
type ActivityTimestamps struct {
	Start uint64 `json:"start,omitempty"`
	End   uint64 `json:"end,omitempty"`
}

// ActivityParty is the player's party; Size is [current, max].
type ActivityParty struct {
	ID      string `json:"id,omitempty"`
	Size    []int  `json:"size,omitempty"`
	Privacy int    `json:"privacy,omitempty"`
}

// ActivityAssets are the images of an activity (ACT-2, ACT-3).
type ActivityAssets struct {
	LargeImage       *string `json:"large_image,omitempty"`
	LargeText        *string `json:"large_text,omitempty"`
	LargeURL         *string `json:"large_url,omitempty"`
	SmallImage       *string `json:"small_image,omitempty"`
	SmallText        *string `json:"small_text,omitempty"`
	SmallURL         *string `json:"small_url,omitempty"`
	InviteCoverImage *string `json:"invite_cover_image,omitempty"`
}

// ActivitySecrets: Join is shared only with players whose invite or join request was accepted;
// the service never sends it in presences.
type ActivitySecrets struct {
	Join string `json:"join,omitempty"`
}

// ActivityButton is a link button of an activity (ACT-5).
type ActivityButton struct {
	Label string `json:"label"`
	URL   string `json:"url"`
}

// Presence is the d of Presence Update (op 3) a client sends.
type Presence struct {
	Since      *int64     `json:"since"`
	Activities []Activity `json:"activities"`
	Status     string     `json:"status"` // online, idle, dnd, invisible (shown offline)
	AFK        bool       `json:"afk"`
}

// PresenceUpdate is the d of the PRESENCE_UPDATE dispatch and an element of READY's presences.
type PresenceUpdate struct {
	User         PresenceUser      `json:"user"`
	Status       string            `json:"status"` // online, idle, dnd, offline
	Activities   []Activity        `json:"activities"`
	ClientStatus map[string]string `json:"client_status"`
}

// PresenceUser is the partial user of a presence.
type PresenceUser struct {
	ID Snowflake `json:"id"`
}

// Activity action types of invites.
const (
	ActivityActionJoin        = 1
	ActivityActionJoinRequest = 5
)

// ActivityInvite is an activity invite or join request (rules ACT-3, INV-1).
type ActivityInvite struct {
	ID                  Snowflake  `json:"id"`
	Type                int        `json:"type"` // 1 Join, 5 JoinRequest
	SenderID            Snowflake  `json:"sender_id"`
	RecipientID         Snowflake  `json:"recipient_id"`
	ChannelID           Snowflake  `json:"channel_id"`
	MessageID           Snowflake  `json:"message_id"`
	ApplicationID       Snowflake  `json:"application_id"` // the sender's game (INV-1)
	ParentApplicationID *Snowflake `json:"parent_application_id"`
	PartyID             string     `json:"party_id"`
	SessionID           string     `json:"session_id"`
	Content             string     `json:"content"`
	CoverImage          string     `json:"cover_image"` // the activity's invite cover, else the app's (ACT-3)
	IsValid             bool       `json:"is_valid"`
	Accepted            bool       `json:"accepted"`
	CreatedAt           string     `json:"created_at"`
}

// ActivityInviteRequest is the body of POST /users/{user_id}/activity-invites.
type ActivityInviteRequest struct {
	Type    int       `json:"type"`
	Content string    `json:"content"`
	ReplyTo Snowflake `json:"reply_to,omitempty"` // the join request this invite answers
}

// ActivityInviteAccepted is the answer of POST /activity-invites/{id}/accept.
type ActivityInviteAccepted struct {
	JoinSecret string         `json:"join_secret"`
	Invite     ActivityInvite `json:"invite"`
}

// RichPresenceSettings is the body of PUT /applications/{id}/rich-presence (Bot): the cover image
// invites fall back to (rule ACT-3).
type RichPresenceSettings struct {
	CoverImage *string `json:"cover_image"`
}

// Limits of activity fields.
const (
	MaxActivityButtons  = 2
	MaxInviteContent    = 1024
	MaxButtonLabelChars = 32
	MaxButtonURLChars   = 512
)

// ValidateActivity checks an activity a client sets; the error names the field by its path
// (for example "activities.0.state_url"). The SDK runs it before sending, the service again on
// receipt. prefix is the path of a, such as "activities.0".
func ValidateActivity(prefix string, a *Activity) *APIError {
	f := func(name string) string { return prefix + "." + name }
	type check struct {
		field    string
		v        *string
		min, max int
		url      bool
	}
	checks := []check{
		{f("details"), a.Details, 2, 128, false},
		{f("details_url"), a.DetailsURL, 2, 256, true},
		{f("state"), a.State, 2, 128, false},
		{f("state_url"), a.StateURL, 2, 256, true},
	}
	if as := a.Assets; as != nil {
		checks = append(checks, []check{
			{f("assets.large_image"), as.LargeImage, 1, 300, false},
			{f("assets.large_text"), as.LargeText, 2, 128, false},
			{f("assets.large_url"), as.LargeURL, 1, 256, true},
			{f("assets.small_image"), as.SmallImage, 1, 300, false},
			{f("assets.small_text"), as.SmallText, 2, 128, false},
			{f("assets.small_url"), as.SmallURL, 1, 256, true},
			{f("assets.invite_cover_image"), as.InviteCoverImage, 1, 300, false},
		}...)
	}
	if n := utf8.RuneCountInString(a.Name); a.Name != "" && n > 128 {
		return InvalidAt(f("name"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 128 in length.")
	}
	if a.Type < ActivityPlaying || a.Type > ActivityHangStatus {
		return InvalidAt(f("type"), "BASE_TYPE_CHOICES", fmt.Sprintf("Value %d is not a valid activity type.", a.Type))
	}
	for _, c := range checks {
		if c.v == nil {
			continue
		}
		if err := checkLen(c.field, *c.v, c.min, c.max); err != nil {
			return err
		}
		if c.url && !httpURL(*c.v) {
			return InvalidAt(c.field, "URL_TYPE_INVALID_URL", "Not a well formed URL.")
		}
	}
	if p := a.Party; p != nil {
		if p.ID != "" {
			if err := checkLen(f("party.id"), p.ID, 2, 128); err != nil {
				return err
			}
		}
		if len(p.Size) != 0 && (len(p.Size) != 2 || p.Size[0] < 1 || p.Size[1] < 0 || (p.Size[1] > 0 && p.Size[0] > p.Size[1])) {
			return InvalidAt(f("party.size"), "BASE_TYPE_BAD_VALUE", "Must be [current >= 1, max >= 0] with current <= max when max is set.")
		}
	}
	if s := a.Secrets; s != nil && s.Join != "" {
		if err := checkLen(f("secrets.join"), s.Join, 2, 128); err != nil {
			return err
		}
	}
	if len(a.Buttons) > MaxActivityButtons {
		return InvalidAt(f("buttons"), "BASE_TYPE_MAX_LENGTH", "Must be 2 or fewer in length.")
	}
	for i, b := range a.Buttons {
		if err := checkLen(fmt.Sprintf("%s.%d.label", f("buttons"), i), b.Label, 1, MaxButtonLabelChars); err != nil {
			return err
		}
		if !httpURL(b.URL) || len(b.URL) > MaxButtonURLChars {
			return InvalidAt(fmt.Sprintf("%s.%d.url", f("buttons"), i), "URL_TYPE_INVALID_URL", "Not a well formed URL.")
		}
	}
	return nil
}

func checkLen(field, v string, min, max int) *APIError {
	n := utf8.RuneCountInString(v)
	if !utf8.ValidString(v) || n < min || n > max {
		return InvalidAt(field, "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between %d and %d in length.", min, max))
	}
	return nil
}

// httpURL tells whether s is an absolute http or https URL.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
