package lobbies

import (
	"encoding/json"
	"net/http"
)

// MessageBody is the body of a message a player sends. Lobby messages and game direct messages
// (package dms) share its rules.
type MessageBody struct {
	Content  string            // 1 to wire.MaxMessageContentChars characters, not only spaces
	Metadata map[string]string // nil when absent; at most MaxMetadataChars
	Flags    int               // only SUPPRESS_EMBEDS and SUPPRESS_NOTIFICATIONS
	// Reference is the body's message_reference, raw (nil when absent), for a DM reply to read
	// with wire.ParseMessageReference; lobby messages ignore it.
	Reference json.RawMessage
}

// ParseMessageBody reads a message body field by field: a wrong type or a broken limit is a 400
// 50035 naming the field, malformed JSON a 400 50109.
func ParseMessageBody(r *http.Request) (MessageBody, error) {
	req, err := parseMessage(readBody(r))
	if err != nil {
		return MessageBody{}, err
	}
	return MessageBody{Content: req.content, Metadata: orNil(req.meta.v), Flags: int(req.flags.v), Reference: req.reference}, nil
}

// ParseModerationBody reads a moderation metadata body: a string map of at most 5 keys (rule
// MODR-1).
func ParseModerationBody(r *http.Request) (map[string]string, error) {
	raw, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return parseModeration(raw)
}
