package wire

import (
	"net/http"
	"strconv"
	"strings"
)

// JSON error codes of the lobby endpoints. CodeUnknownLobby and CodeUnknownMessage are the
// platform's. The platform publishes no code for its lobby limits, so the service answers them
// with the platform's codes for the same kind of limit elsewhere: CodeMaxLobbies (its "maximum
// number of guilds reached (100)") when a user is in 100 lobbies of a game, CodeMaxLobbyMembers
// (its "maximum number of thread participants reached (1000)") when a lobby has 1000 members.
const (
	CodeUnknownMessage  = 10008
	CodeUnknownLobby    = 10031
	CodeMaxLobbies      = 30001
	CodeMaxLobbyMembers = 30033
)

// UnknownLobby is the 404 of a lobby that does not exist, has expired or belongs to another
// application.
func UnknownLobby() *APIError {
	return &APIError{Status: http.StatusNotFound, Code: CodeUnknownLobby, Message: "Unknown Lobby"}
}

// UnknownMessage is the 404 of a message that is not in the lobby.
func UnknownMessage() *APIError {
	return &APIError{Status: http.StatusNotFound, Code: CodeUnknownMessage, Message: "Unknown Message"}
}

// UnknownUser is the 404 of a user id the service does not know (or that the application may
// not use).
func UnknownUser() *APIError {
	return &APIError{Status: http.StatusNotFound, Code: CodeUnknownUser, Message: "Unknown User"}
}

// MissingPermissions is 50013.
func MissingPermissions() *APIError {
	return &APIError{Status: http.StatusForbidden, Code: CodeMissingPermissions, Message: "Missing Permissions"}
}

// InvalidAt is Invalid for a field at a dotted path, nested the platform's way: "members.0.id"
// gives {"errors": {"members": {"0": {"id": {"_errors": [...]}}}}}; "" puts the error on the body
// itself: {"errors": {"_errors": [...]}}.
func InvalidAt(path, code, message string) *APIError {
	var node = map[string]any{"_errors": []FieldError{{Code: code, Message: message}}}
	if path != "" {
		parts := strings.Split(path, ".")
		for i := len(parts) - 1; i >= 0; i-- {
			node = map[string]any{parts[i]: node}
		}
	}
	return &APIError{Status: http.StatusBadRequest, Code: CodeInvalidFormBody, Message: "Invalid Form Body", Errors: node}
}

// LobbyMemberCanLinkLobby is the lobby member flag that lets a member link a channel to the lobby.
const LobbyMemberCanLinkLobby = 1 << 0

// Lobby is the lobby object.
type Lobby struct {
	ID            Snowflake `json:"id"`
	ApplicationID Snowflake `json:"application_id"`
	// Metadata is at most 1000 characters, keys and values together; null when empty.
	Metadata map[string]string `json:"metadata"`
	Members  []LobbyMember     `json:"members"`
	// LinkedChannel is the guild channel linked to the lobby (rule LOB-5), absent when none.
	LinkedChannel *LinkedChannel `json:"linked_channel,omitempty"`
	// LastMessageID (sdkpp, as a channel's) is the newest message's id, null when there is none:
	// a client that joins knows from where to fetch what it misses if its session is lost.
	LastMessageID *Snowflake `json:"last_message_id"`
	// Revision (sdkpp) orders what a client learns of the lobby: every change of a lobby
	// (metadata, members) has a revision above every earlier one, and the lobby object and the
	// LOBBY_* events of that change carry it. A snapshot or event older than what a client holds
	// is stale. Absent from services that do not send it.
	Revision Snowflake `json:"revision,omitempty"`
}

// LobbyMember is the lobby member object.
type LobbyMember struct {
	ID       Snowflake         `json:"id"`
	Metadata map[string]string `json:"metadata"` // at most 1000 characters; null when empty
	Flags    int               `json:"flags"`    // LobbyMemberCanLinkLobby
	// AdditionalName (1 to 80 characters) is set only by the application's backend (rule MSG-2).
	AdditionalName *string `json:"additional_name,omitempty"`
	// Connected is true while the member has a live gateway session of the lobby's application;
	// LOBBY_MEMBER_UPDATE tells when it changes.
	Connected bool `json:"connected"`
	// User (sdkpp) is the member's user with its game profiles in the lobby's application; absent
	// when the account no longer exists.
	User *User `json:"user,omitempty"`
}

// LobbyMessage is the lobby message object, also the data of the LOBBY_MESSAGE_CREATE and
// LOBBY_MESSAGE_UPDATE webhook events and gateway dispatches.
type LobbyMessage struct {
	ID        Snowflake `json:"id"`
	Type      int       `json:"type"` // 0, a default message
	Content   string    `json:"content"`
	LobbyID   Snowflake `json:"lobby_id"`
	ChannelID Snowflake `json:"channel_id"` // the lobby's own channel: the lobby id
	Author    User      `json:"author"`
	// LobbyMember carries the author's additional name when the message was sent (rule MSG-2).
	LobbyMember LobbyMessageMember `json:"lobby_member"`
	Metadata    map[string]string  `json:"metadata"` // the sender's; null when empty
	// ModerationMetadata is set by the application's backend (rules MSG-3, MODR-1); null when empty.
	ModerationMetadata map[string]string `json:"moderation_metadata"`
	Flags              int               `json:"flags"`
	ApplicationID      Snowflake         `json:"application_id"`
	Timestamp          string            `json:"timestamp"`        // RFC 3339, when it was sent
	EditedTimestamp    *string           `json:"edited_timestamp"` // always null: lobby messages are not edited
}

// LobbyMessageMember is the lobby_member field of a lobby message.
type LobbyMessageMember struct {
	AdditionalName *string `json:"additional_name,omitempty"`
}

// Message flags a sender may set on a lobby message.
const (
	MessageFlagSuppressEmbeds        = 1 << 2
	MessageFlagSuppressNotifications = 1 << 12
)

// Webhook events of lobby messages (rule WH-2). LOBBY_MESSAGE_CREATE carries the LobbyMessage.
const (
	EventLobbyMessageCreate = "LOBBY_MESSAGE_CREATE"
	EventLobbyMessageUpdate = "LOBBY_MESSAGE_UPDATE"
)

// LobbyDeleted is the data of a LOBBY_DELETE dispatch.
type LobbyDeleted struct {
	ID       Snowflake `json:"id"`
	Revision Snowflake `json:"revision,omitempty"` // sdkpp: see Lobby.Revision
}

// LobbyMemberEvent is the data of the LOBBY_MEMBER_ADD, _UPDATE and _REMOVE dispatches.
type LobbyMemberEvent struct {
	LobbyID  Snowflake   `json:"lobby_id"`
	Member   LobbyMember `json:"member"`
	Revision Snowflake   `json:"revision,omitempty"` // sdkpp: see Lobby.Revision
}

// CreateOrJoinLobbyRequest is the body of PUT /lobbies.
type CreateOrJoinLobbyRequest struct {
	Secret             string            `json:"secret"` // 1 to 250 characters
	IdleTimeoutSeconds *int              `json:"idle_timeout_seconds,omitempty"`
	LobbyMetadata      map[string]string `json:"lobby_metadata,omitempty"`
	MemberMetadata     map[string]string `json:"member_metadata,omitempty"`
}

// LobbyRequest is the body of POST /lobbies and PATCH /lobbies/{id}.
type LobbyRequest struct {
	Metadata           map[string]string   `json:"metadata,omitempty"`
	Members            []LobbyMemberUpsert `json:"members,omitempty"` // at most 25
	IdleTimeoutSeconds *int                `json:"idle_timeout_seconds,omitempty"`
}

// LobbyMemberUpsert is one member of POST /lobbies, PATCH /lobbies/{id} and POST
// /lobbies/{id}/members/bulk, and (without ID and RemoveMember) the body of PUT
// /lobbies/{id}/members/{user_id}.
type LobbyMemberUpsert struct {
	ID             Snowflake         `json:"id,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	Flags          *int              `json:"flags,omitempty"`
	AdditionalName *string           `json:"additional_name,omitempty"`
	RemoveMember   bool              `json:"remove_member,omitempty"` // bulk only
}

// LobbyMessageRequest is the body of POST /lobbies/{id}/messages.
type LobbyMessageRequest struct {
	Content  string            `json:"content"` // 1 to 2000 characters
	Metadata map[string]string `json:"metadata,omitempty"`
	Flags    int               `json:"flags,omitempty"`
	// Nonce (at most 25 characters) with EnforceNonce makes the send idempotent: the service
	// answers a repeated send of the same author, lobby and nonce within minutes with the first
	// message instead of making another.
	Nonce        string `json:"nonce,omitempty"`
	EnforceNonce bool   `json:"enforce_nonce,omitempty"`
}

// AppendJSON appends r exactly as encoding/json encodes it (Appender): the SDK encodes every
// lobby message it sends, on the way to the socket.
func (r LobbyMessageRequest) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"content":`...)
	dst = appendString(dst, r.Content)
	if len(r.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		dst = appendStringMap(dst, r.Metadata)
	}
	if r.Flags != 0 {
		dst = append(dst, `,"flags":`...)
		dst = strconv.AppendInt(dst, int64(r.Flags), 10)
	}
	if r.Nonce != "" {
		dst = append(dst, `,"nonce":`...)
		dst = appendString(dst, r.Nonce)
	}
	if r.EnforceNonce {
		dst = append(dst, `,"enforce_nonce":true`...)
	}
	return append(dst, '}')
}
