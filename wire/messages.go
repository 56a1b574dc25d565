package wire

import "net/http"

// Message is a game direct message between two users: the object of the DM routes, the data of
// the MESSAGE_CREATE and MESSAGE_UPDATE gateway dispatches and of the GAME_DIRECT_MESSAGE_CREATE
// and GAME_DIRECT_MESSAGE_UPDATE webhook events.
type Message struct {
	ID          Snowflake         `json:"id"`
	Type        int               `json:"type"` // 0, a default message
	Content     string            `json:"content"`
	ChannelID   Snowflake         `json:"channel_id"` // the DM channel of the two users
	Author      User              `json:"author"`
	RecipientID Snowflake         `json:"recipient_id"`
	Metadata    map[string]string `json:"metadata"` // the sender's; null when empty
	// ModerationMetadata is set by the application's backend (rules MSG-3, MODR-1); null when empty.
	ModerationMetadata map[string]string `json:"moderation_metadata"`
	Flags              int               `json:"flags"`
	// ApplicationID is the application whose SDK sent the message (rule MSG-1).
	ApplicationID   Snowflake `json:"application_id"`
	Timestamp       string    `json:"timestamp"`        // RFC 3339, when it was sent
	EditedTimestamp *string   `json:"edited_timestamp"` // RFC 3339, null until edited
	// The platform's message fields a DM message has too: a DM has no @everyone, roles,
	// attachments, embeds or components here; Mentions are the users its content mentions
	// who are in the channel.
	TTS             bool       `json:"tts"`
	MentionEveryone bool       `json:"mention_everyone"`
	Mentions        []User     `json:"mentions"`
	MentionRoles    []string   `json:"mention_roles"`
	Attachments     []struct{} `json:"attachments"`
	Embeds          []struct{} `json:"embeds"`
	Components      []struct{} `json:"components"`
	Pinned          bool       `json:"pinned"`
	// ChannelType is ChannelTypeDM on the gateway's dispatches (clients build an uncached DM
	// channel from it); absent from REST answers, as on the platform.
	ChannelType *int `json:"channel_type,omitempty"`
	// MessageReference and ReferencedMessage are set on a reply (Type MessageTypeReply): the
	// message it answers in the channel, and that message (null once deleted).
	MessageReference  *MessageReference   `json:"message_reference,omitempty"`
	ReferencedMessage Referenced[Message] `json:"referenced_message,omitzero"`
}

// MessageDelete is the data of the MESSAGE_DELETE dispatch and the GAME_DIRECT_MESSAGE_DELETE
// webhook event.
type MessageDelete struct {
	ID            Snowflake `json:"id"`
	ChannelID     Snowflake `json:"channel_id"`
	AuthorID      Snowflake `json:"author_id"`
	RecipientID   Snowflake `json:"recipient_id"`
	ApplicationID Snowflake `json:"application_id"`
}

// DMChannel is a direct-message channel of two users, the object of POST /users/@me/channels
// and of GET /users/@me/channels (which also fills LastMessageID).
type DMChannel struct {
	ID            Snowflake  `json:"id"`
	Type          int        `json:"type"` // ChannelTypeDM
	Recipients    []User     `json:"recipients"`
	LastMessageID *Snowflake `json:"last_message_id"`
}

// ChannelTypeDM is the type of a direct-message channel.
const ChannelTypeDM = 1

// CreateDMRequest is the body of POST /users/@me/channels.
type CreateDMRequest struct {
	RecipientID Snowflake `json:"recipient_id"`
}

// MessageEditRequest is the body of PATCH /channels/{channel_id}/messages/{message_id}.
type MessageEditRequest struct {
	Content *string `json:"content"`
}

// Webhook events of game direct messages (rule WH-2).
const (
	EventGameDirectMessageCreate = "GAME_DIRECT_MESSAGE_CREATE"
	EventGameDirectMessageUpdate = "GAME_DIRECT_MESSAGE_UPDATE"
	EventGameDirectMessageDelete = "GAME_DIRECT_MESSAGE_DELETE"
)

// CannotMessageUser is the 403 of a direct message to a user who does not accept it.
func CannotMessageUser() *APIError {
	return &APIError{Status: http.StatusForbidden, Code: CodeCannotSendToUser, Message: "Cannot send messages to this user"}
}
