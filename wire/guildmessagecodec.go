package wire

import (
	"encoding/json"
	"slices"
	"strconv"
)

// A page of guild messages (up to 100, each with its author, member, mentions and attachments)
// holds hundreds of ids and strings; encoding/json walks them by reflection, which was most of
// the page's encoding. AppendJSON writes the same bytes directly (guildmessagecodec_test.go
// holds the two to agreement); the fields that messages of a page seldom have (a nonce, a
// forward's snapshots, an interaction's metadata) are left to encoding/json.

// GuildMessages is a list of guild messages that encodes itself (Appender), as a page of them
// is answered.
type GuildMessages []GuildMessage

// AppendJSON appends l, encoded exactly as encoding/json encodes the slice, to dst.
func (l GuildMessages) AppendJSON(dst []byte) []byte {
	if len(l) < 2 {
		return appendArray(dst, l, (*GuildMessage).AppendJSON)
	}
	// The buffer grows once, to what the first message takes for each (and a quarter more):
	// growing it as it fills would copy a page of 100 (hundreds of kilobytes) several times.
	start := len(dst)
	dst = l[0].AppendJSON(append(dst, '['))
	dst = slices.Grow(dst, (len(dst)-start)*(len(l)-1)*5/4)
	for i := 1; i < len(l); i++ {
		dst = l[i].AppendJSON(append(dst, ','))
	}
	return append(dst, ']')
}

// AppendJSON appends m, encoded exactly as encoding/json encodes the struct, to dst.
func (m *GuildMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendSnowflake(dst, m.ID)
	dst = append(dst, `,"type":`...)
	dst = strconv.AppendInt(dst, int64(m.Type), 10)
	dst = append(dst, `,"channel_id":`...)
	dst = appendSnowflake(dst, m.ChannelID)
	dst = append(dst, `,"guild_id":`...)
	dst = appendSnowflake(dst, m.GuildID)
	dst = append(dst, `,"author":`...)
	dst = m.Author.appendJSON(dst)
	if m.Member != nil {
		dst = append(dst, `,"member":`...)
		dst = m.Member.appendJSON(dst)
	}
	dst = append(dst, `,"content":`...)
	dst = appendString(dst, m.Content)
	dst = append(dst, `,"timestamp":`...)
	dst = appendString(dst, m.Timestamp)
	dst = append(dst, `,"edited_timestamp":`...)
	dst = appendStringPtr(dst, m.EditedTimestamp)
	dst = append(dst, `,"tts":`...)
	dst = strconv.AppendBool(dst, m.TTS)
	dst = append(dst, `,"mention_everyone":`...)
	dst = strconv.AppendBool(dst, m.MentionEveryone)
	dst = append(dst, `,"mentions":`...)
	dst = appendArray(dst, m.Mentions, (*Mention).appendJSON)
	dst = append(dst, `,"mention_roles":`...)
	dst = appendArray(dst, m.MentionRoles, func(s *string, dst []byte) []byte { return appendString(dst, *s) })
	dst = append(dst, `,"attachments":`...)
	dst = appendArray(dst, m.Attachments, (*Attachment).appendJSON)
	dst = append(dst, `,"embeds":`...)
	dst = appendArray(dst, m.Embeds, appendEmpty)
	dst = append(dst, `,"components":`...)
	dst = appendArray(dst, m.Components, appendEmpty)
	dst = append(dst, `,"pinned":`...)
	dst = strconv.AppendBool(dst, m.Pinned)
	dst = append(dst, `,"flags":`...)
	dst = strconv.AppendInt(dst, int64(m.Flags), 10)
	if m.Nonce != nil {
		dst = appendMarshaled(append(dst, `,"nonce":`...), m.Nonce)
	}
	if m.ChannelType != nil {
		dst = append(dst, `,"channel_type":`...)
		dst = strconv.AppendInt(dst, int64(*m.ChannelType), 10)
	}
	if r := m.MessageReference; r != nil {
		dst = append(dst, `,"message_reference":{"type":`...)
		dst = strconv.AppendInt(dst, int64(r.Type), 10)
		dst = append(dst, `,"message_id":`...)
		dst = appendSnowflake(dst, r.MessageID)
		dst = append(dst, `,"channel_id":`...)
		dst = appendSnowflake(dst, r.ChannelID)
		if r.GuildID != 0 {
			dst = append(dst, `,"guild_id":`...)
			dst = appendSnowflake(dst, r.GuildID)
		}
		dst = append(dst, '}')
	}
	if m.ReferencedMessage.Present {
		dst = append(dst, `,"referenced_message":`...)
		if m.ReferencedMessage.Message == nil {
			dst = append(dst, "null"...)
		} else {
			dst = m.ReferencedMessage.Message.AppendJSON(dst)
		}
	}
	if len(m.MessageSnapshots) > 0 {
		dst = appendMarshaled(append(dst, `,"message_snapshots":`...), m.MessageSnapshots)
	}
	if m.ApplicationID != nil {
		dst = append(dst, `,"application_id":`...)
		dst = appendSnowflake(dst, *m.ApplicationID)
	}
	if m.WebhookID != nil {
		dst = append(dst, `,"webhook_id":`...)
		dst = appendSnowflake(dst, *m.WebhookID)
	}
	if m.InteractionMetadata != nil {
		dst = appendMarshaled(append(dst, `,"interaction_metadata":`...), m.InteractionMetadata)
	}
	return append(dst, '}')
}

// appendJSON appends m as encoding/json encodes the struct: its user's fields, then its member.
func (m *Mention) appendJSON(dst []byte) []byte {
	dst = m.User.appendJSON(dst)
	if m.Member == nil {
		return dst
	}
	dst = append(dst[:len(dst)-1], `,"member":`...) // the user's closing brace comes last
	dst = m.Member.appendJSON(dst)
	return append(dst, '}')
}

// appendJSON appends m as encoding/json encodes the struct.
func (m *Member) appendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	if m.User != nil {
		dst = append(dst, `"user":`...)
		dst = m.User.appendJSON(dst)
		dst = append(dst, ',')
	}
	dst = append(dst, `"nick":`...)
	dst = appendStringPtr(dst, m.Nick)
	dst = append(dst, `,"avatar":`...)
	dst = appendStringPtr(dst, m.Avatar)
	dst = append(dst, `,"banner":`...)
	dst = appendStringPtr(dst, m.Banner)
	if m.Bio != "" {
		dst = append(dst, `,"bio":`...)
		dst = appendString(dst, m.Bio)
	}
	dst = append(dst, `,"roles":`...)
	dst = appendArray(dst, m.Roles, func(r *Snowflake, dst []byte) []byte { return appendSnowflake(dst, *r) })
	dst = append(dst, `,"joined_at":`...)
	dst = appendString(dst, m.JoinedAt)
	dst = append(dst, `,"premium_since":`...)
	dst = appendStringPtr(dst, m.PremiumSince)
	dst = append(dst, `,"deaf":`...)
	dst = strconv.AppendBool(dst, m.Deaf)
	dst = append(dst, `,"mute":`...)
	dst = strconv.AppendBool(dst, m.Mute)
	dst = append(dst, `,"flags":`...)
	dst = strconv.AppendInt(dst, int64(m.Flags), 10)
	dst = append(dst, `,"pending":`...)
	dst = strconv.AppendBool(dst, m.Pending)
	if m.GuildID != nil {
		dst = append(dst, `,"guild_id":`...)
		dst = appendSnowflake(dst, *m.GuildID)
	}
	return append(dst, '}')
}

// appendJSON appends a as encoding/json encodes the struct.
func (a *Attachment) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendSnowflake(dst, a.ID)
	dst = append(dst, `,"filename":`...)
	dst = appendString(dst, a.Filename)
	if a.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = appendString(dst, a.Description)
	}
	if a.ContentType != "" {
		dst = append(dst, `,"content_type":`...)
		dst = appendString(dst, a.ContentType)
	}
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, int64(a.Size), 10)
	dst = append(dst, `,"url":`...)
	dst = appendString(dst, a.URL)
	dst = append(dst, `,"proxy_url":`...)
	dst = appendString(dst, a.ProxyURL)
	if a.Width != nil {
		dst = append(dst, `,"width":`...)
		dst = strconv.AppendInt(dst, int64(*a.Width), 10)
	}
	if a.Height != nil {
		dst = append(dst, `,"height":`...)
		dst = strconv.AppendInt(dst, int64(*a.Height), 10)
	}
	if a.Flags != 0 {
		dst = append(dst, `,"flags":`...)
		dst = strconv.AppendInt(dst, int64(a.Flags), 10)
	}
	return append(dst, '}')
}

// appendArray appends list as encoding/json encodes a slice, null when nil, each element as
// each appends it.
func appendArray[T any](dst []byte, list []T, each func(*T, []byte) []byte) []byte {
	if list == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = each(&list[i], dst)
	}
	return append(dst, ']')
}

// appendEmpty appends an empty struct as encoding/json encodes it.
func appendEmpty(_ *struct{}, dst []byte) []byte { return append(dst, "{}"...) }

// appendMarshaled appends v as encoding/json encodes it, for the fields left to it. The wire
// shapes it gets encode without fail (no channels, functions or cycles); should one ever fail,
// null keeps the output valid JSON.
func appendMarshaled(dst []byte, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, b...)
}
