package wire

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"sdkpp/internal/jsonscan"
)

// A lobby message is encoded by the service for every send and decoded by every member's SDK,
// on the path whose latency players feel; encoding/json spends about 10 µs on each, by
// reflection, where this code spends a fraction of that. The bytes are exactly encoding/json's
// (codec_test.go holds the two to agreement), and decoding leaves anything but the usual shape
// to encoding/json, so results and errors stay its own.

// Appender is a value that encodes itself, exactly as encoding/json would and so as valid JSON
// (LobbyMessage): writers of JSON take its bytes as they are, sparing encoding/json's check and
// copy of a MarshalJSON result.
type Appender interface{ AppendJSON(dst []byte) []byte }

// Encoded is a value already encoded as JSON, which appends itself as it is: a value sent to
// several places (a lobby message to its members and as the sender's answer) is encoded once.
type Encoded []byte

// AppendJSON appends e to dst.
func (e Encoded) AppendJSON(dst []byte) []byte { return append(dst, e...) }

// MarshalJSON returns e.
func (e Encoded) MarshalJSON() ([]byte, error) { return e, nil }

// MarshalJSON encodes m as encoding/json encodes the struct.
func (m LobbyMessage) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// UnmarshalJSON decodes b into m as encoding/json decodes the struct (DecodeLobbyMessage).
func (m *LobbyMessage) UnmarshalJSON(b []byte) error { return DecodeLobbyMessage(b, m) }

// lobbyMessage is LobbyMessage without its methods: encoding/json's reflection, for what the
// fast paths leave to it.
type lobbyMessage LobbyMessage

// AppendJSON appends m, encoded exactly as encoding/json encodes the struct, to dst.
func (m LobbyMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendSnowflake(dst, m.ID)
	dst = append(dst, `,"type":`...)
	dst = strconv.AppendInt(dst, int64(m.Type), 10)
	dst = append(dst, `,"content":`...)
	dst = appendString(dst, m.Content)
	dst = append(dst, `,"lobby_id":`...)
	dst = appendSnowflake(dst, m.LobbyID)
	dst = append(dst, `,"channel_id":`...)
	dst = appendSnowflake(dst, m.ChannelID)
	dst = append(dst, `,"author":`...)
	dst = m.Author.appendJSON(dst)
	dst = append(dst, `,"lobby_member":{`...)
	if m.LobbyMember.AdditionalName != nil {
		dst = append(dst, `"additional_name":`...)
		dst = appendString(dst, *m.LobbyMember.AdditionalName)
	}
	dst = append(dst, `},"metadata":`...)
	dst = appendStringMap(dst, m.Metadata)
	dst = append(dst, `,"moderation_metadata":`...)
	dst = appendStringMap(dst, m.ModerationMetadata)
	dst = append(dst, `,"flags":`...)
	dst = strconv.AppendInt(dst, int64(m.Flags), 10)
	dst = append(dst, `,"application_id":`...)
	dst = appendSnowflake(dst, m.ApplicationID)
	dst = append(dst, `,"timestamp":`...)
	dst = appendString(dst, m.Timestamp)
	dst = append(dst, `,"edited_timestamp":`...)
	dst = appendStringPtr(dst, m.EditedTimestamp)
	return append(dst, '}')
}

// appendJSON appends u as encoding/json encodes the struct.
func (u *User) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendSnowflake(dst, u.ID)
	dst = append(dst, `,"username":`...)
	dst = appendString(dst, u.Username)
	dst = append(dst, `,"discriminator":`...)
	dst = appendString(dst, u.Discriminator)
	dst = append(dst, `,"global_name":`...)
	dst = appendStringPtr(dst, u.GlobalName)
	dst = append(dst, `,"avatar":`...)
	dst = appendStringPtr(dst, u.Avatar)
	if u.Bot {
		dst = append(dst, `,"bot":true`...)
	}
	dst = append(dst, `,"premium_type":`...)
	dst = strconv.AppendInt(dst, int64(u.PremiumType), 10)
	dst = append(dst, `,"flags":`...)
	dst = strconv.AppendInt(dst, int64(u.Flags), 10)
	dst = append(dst, `,"public_flags":`...)
	dst = strconv.AppendInt(dst, int64(u.PublicFlags), 10)
	dst = append(dst, `,"is_provisional":`...)
	dst = strconv.AppendBool(dst, u.IsProvisional)
	if u.PrimaryGuild != nil {
		dst = append(dst, `,"primary_guild":`...)
		dst = u.PrimaryGuild.appendJSON(dst)
	}
	if len(u.ApplicationProfiles) > 0 {
		dst = append(dst, `,"application_profiles":[`...)
		for i := range u.ApplicationProfiles {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = u.ApplicationProfiles[i].appendJSON(dst)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendJSON appends g as encoding/json encodes the struct.
func (g *PrimaryGuild) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"identity_guild_id":`...)
	if g.IdentityGuildID == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendSnowflake(dst, *g.IdentityGuildID)
	}
	dst = append(dst, `,"identity_enabled":`...)
	if g.IdentityEnabled == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendBool(dst, *g.IdentityEnabled)
	}
	dst = append(dst, `,"tag":`...)
	dst = appendStringPtr(dst, g.Tag)
	dst = append(dst, `,"badge":`...)
	dst = appendStringPtr(dst, g.Badge)
	return append(dst, '}')
}

// appendJSON appends p as encoding/json encodes the struct.
func (p *ApplicationProfile) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"application_id":`...)
	dst = appendSnowflake(dst, p.ApplicationID)
	dst = append(dst, `,"username":`...)
	dst = appendString(dst, p.Username)
	dst = append(dst, `,"avatar_hash":`...)
	dst = appendString(dst, p.AvatarHash)
	dst = append(dst, `,"metadata":`...)
	dst = appendString(dst, p.Metadata)
	if p.ProviderID != nil {
		dst = append(dst, `,"provider_id":`...)
		dst = appendString(dst, *p.ProviderID)
	}
	dst = append(dst, `,"provider_issued_user_id":`...)
	dst = appendString(dst, p.ProviderIssuedUserID)
	dst = append(dst, `,"provider_type":`...)
	dst = appendString(dst, p.ProviderType)
	return append(dst, '}')
}

func appendSnowflake(dst []byte, s Snowflake) []byte {
	dst = append(dst, '"')
	dst = strconv.AppendUint(dst, uint64(s), 10)
	return append(dst, '"')
}

func appendStringPtr(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendString(dst, *s)
}

// appendStringMap appends m as encoding/json encodes a map[string]string: null when nil, the
// keys sorted.
func appendStringMap(dst []byte, m map[string]string) []byte {
	if m == nil {
		return append(dst, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, m[k])
	}
	return append(dst, '}')
}

// AppendString appends s as a JSON string, byte for byte as encoding/json writes it (appendString),
// without its reflection and allocations.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// appendString appends s as a JSON string with encoding/json's escaping: the two-character
// escapes for '"', '\\', '\b', '\f', '\n', '\r' and '\t'; \u00XX for the other control
// characters and for '<', '>' and '&' (its HTML-safe default); \ufffd for each byte that is not
// UTF-8; \u2028 and \u2029 for those two separators.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// IsZero reports whether m is the zero LobbyMessage (reflect.Value.IsZero's answer, a nil map or
// slice being zero and an empty one not), without reflection, which took a sender a few hundred
// nanoseconds per answer: a decoder that reads into a value of its own and then assigns it (the
// tunnel's answer of a lobby message) is exact only for a zero destination, encoding/json
// decoding into what is there. TestLobbyMessageIsZero fails for a field it does not look at.
func (m *LobbyMessage) IsZero() bool {
	return m.ID == 0 && m.Type == 0 && m.Content == "" && m.LobbyID == 0 && m.ChannelID == 0 &&
		m.Author.isZero() && m.LobbyMember.AdditionalName == nil && m.Metadata == nil &&
		m.ModerationMetadata == nil && m.Flags == 0 && m.ApplicationID == 0 && m.Timestamp == "" &&
		m.EditedTimestamp == nil
}

// isZero is LobbyMessage.IsZero for its author.
func (u *User) isZero() bool {
	return u.ID == 0 && u.Username == "" && u.Discriminator == "" && u.GlobalName == nil && u.Avatar == nil &&
		!u.Bot && u.PremiumType == 0 && u.Flags == 0 && u.PublicFlags == 0 && !u.IsProvisional &&
		u.PrimaryGuild == nil && u.ApplicationProfiles == nil
}

// DecodeLobbyMessage decodes the JSON object b into m exactly as encoding/json decodes the
// struct: in one pass for the shape the service sends, and with encoding/json for anything else
// (a key it does not know as written, which encoding/json might match case-insensitively, a
// value of an unusual type or spelling, invalid JSON), which also gives the errors.
func DecodeLobbyMessage(b []byte, m *LobbyMessage) error {
	if string(b) == "null" { // as encoding/json leaves a struct for null
		return nil
	}
	if decodeLobbyMessage(b, m) {
		return nil
	}
	return unmarshalCopy(b, (*lobbyMessage)(m))
}

// unmarshalCopy is json.Unmarshal(v, dst) through a copy of *dst on the heap, so that dst does not
// escape: a caller's value on its stack (a message being decoded) stays there, and only the
// paths that use encoding/json allocate for it.
func unmarshalCopy[T any](v []byte, dst *T) error {
	p := new(T)
	*p = *dst // encoding/json decodes into what is there (it adds to a map that is set)
	err := json.Unmarshal(v, p)
	*dst = *p
	return err
}

// decodeLobbyMessage is DecodeLobbyMessage's one pass; false means it could not decode b exactly,
// and m may then hold part of it (encoding/json decodes it again whole).
func decodeLobbyMessage(b []byte, m *LobbyMessage) bool {
	return jsonscan.Object(b, func(k, v []byte) bool {
		switch string(k) {
		case "id":
			return snowflakeField(v, &m.ID)
		case "type":
			return intField(v, &m.Type)
		case "content":
			return stringField(v, &m.Content)
		case "lobby_id":
			return snowflakeField(v, &m.LobbyID)
		case "channel_id":
			return snowflakeField(v, &m.ChannelID)
		case "author":
			return isNull(v) || decodeUser(v, &m.Author)
		case "lobby_member":
			return isNull(v) || jsonscan.Object(v, func(k, v []byte) bool {
				return string(k) == "additional_name" && stringPtrField(v, &m.LobbyMember.AdditionalName)
			})
		case "metadata":
			return mapField(v, &m.Metadata)
		case "moderation_metadata":
			return mapField(v, &m.ModerationMetadata)
		case "flags":
			return intField(v, &m.Flags)
		case "application_id":
			return snowflakeField(v, &m.ApplicationID)
		case "timestamp":
			return stringField(v, &m.Timestamp)
		case "edited_timestamp":
			return stringPtrField(v, &m.EditedTimestamp)
		}
		return false
	})
}

// decodeUser is decodeLobbyMessage for the author.
func decodeUser(b []byte, u *User) bool {
	return jsonscan.Object(b, func(k, v []byte) bool {
		switch string(k) {
		case "id":
			return snowflakeField(v, &u.ID)
		case "username":
			return stringField(v, &u.Username)
		case "discriminator":
			return stringField(v, &u.Discriminator)
		case "global_name":
			return stringPtrField(v, &u.GlobalName)
		case "avatar":
			return stringPtrField(v, &u.Avatar)
		case "bot":
			return boolField(v, &u.Bot)
		case "premium_type":
			return intField(v, &u.PremiumType)
		case "flags":
			return intField(v, &u.Flags)
		case "public_flags":
			return intField(v, &u.PublicFlags)
		case "is_provisional":
			return boolField(v, &u.IsProvisional)
		case "application_profiles":
			return unmarshalCopy(v, &u.ApplicationProfiles) == nil
		case "primary_guild":
			return unmarshalCopy(v, &u.PrimaryGuild) == nil
		}
		return false
	})
}

func isNull(v []byte) bool { return string(v) == "null" }

// The field readers below take one valid JSON value (as jsonscan.Object gives it) and store what
// encoding/json would store, or report false where they might differ from it.

func snowflakeField(v []byte, s *Snowflake) bool {
	if isNull(v) {
		*s = 0 // Snowflake.UnmarshalJSON reads null as 0
		return true
	}
	// The digits are parsed where they are: a message carries five ids, and a string for each
	// was most of its decoding's allocations. A string with an escape goes to encoding/json; one
	// with bytes that are not UTF-8 is no number (ParseUint refuses it).
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return false
	}
	digits := v[1 : len(v)-1]
	if len(digits) == 0 || string(digits) == "null" {
		*s = 0
		return true
	}
	n, ok := decimal(digits)
	if !ok || n > MaxSnowflake {
		return false
	}
	*s = Snowflake(n)
	return true
}

// decimal reads the unsigned decimal integer d as strconv.ParseUint(d, 10, 64) does: up to 19
// digits (less than 2^64 whatever they are, as every id is) in one loop, longer ones with
// ParseUint.
func decimal(d []byte) (uint64, bool) {
	if len(d) > 19 {
		n, err := strconv.ParseUint(string(d), 10, 64) // not kept: no allocation
		return n, err == nil
	}
	var n uint64
	for _, c := range d {
		if c -= '0'; c > 9 {
			return 0, false
		}
		n = n*10 + uint64(c)
	}
	return n, len(d) > 0
}

func intField(v []byte, n *int) bool {
	if isNull(v) {
		return true
	}
	x, err := strconv.Atoi(string(v))
	if err != nil {
		return false
	}
	*n = x
	return true
}

func boolField(v []byte, b *bool) bool {
	switch string(v) {
	case "null":
	case "true":
		*b = true
	case "false":
		*b = false
	default:
		return false
	}
	return true
}

func stringField(v []byte, s *string) bool {
	if isNull(v) {
		return true
	}
	if str, ok := jsonscan.Plain(v); ok {
		*s = str
		return true
	}
	return len(v) > 0 && v[0] == '"' && unmarshalCopy(v, s) == nil
}

func stringPtrField(v []byte, s **string) bool {
	if isNull(v) {
		*s = nil
		return true
	}
	var str string
	if !stringField(v, &str) || v[0] != '"' {
		return false
	}
	if *s != nil { // encoding/json writes through a pointer that is set
		**s = str
	} else {
		*s = &str
	}
	return true
}

func mapField(v []byte, m *map[string]string) bool {
	if isNull(v) {
		*m = nil
		return true
	}
	return unmarshalCopy(v, m) == nil
}
