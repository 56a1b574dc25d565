package expressions

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"time"
	"unicode/utf8"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// Service serves guild emoji and scheduled events. Set its fields before Register.
type Service struct {
	*guildaccess.Base
}

// Register adds the routes to mux (paths relative to the API base): GET /guilds/{id}/emojis,
// DELETE /guilds/{id}/emojis/{emoji_id}, GET /guilds/{id}/scheduled-events and DELETE
// .../{event_id}. Their POST routes are served through guildaccess.Base.Actions (see Actions).
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("GET /guilds/{guild_id}/emojis", s.Route(s.listEmojis))
	mux.HandleFunc("DELETE /guilds/{guild_id}/emojis/{emoji_id}", s.Route(s.deleteEmoji))
	mux.HandleFunc("GET /guilds/{guild_id}/scheduled-events", s.Route(s.listEvents))
	mux.HandleFunc("DELETE /guilds/{guild_id}/scheduled-events/{event_id}", s.Route(s.deleteEvent))
}

// Actions are the routes POST /guilds/{guild_id}/{action} of this package: Create Guild Emoji and
// Create Guild Scheduled Event.
func (s *Service) Actions() guildaccess.Routes {
	return guildaccess.Routes{"emojis": s.createEmoji, "scheduled-events": s.createEvent}
}

// createPermission returns the permissions any of which lets a caller create what create (from
// wire.ExpressionPermissionsFrom, for bots) and manage (before it) name: a bot needs manage before
// the date and create from it (rules VER-1, ERR-1); a user may create with either, as on the
// platform.
func createPermission(t time.Time, bot bool, create, manage uint64) uint64 {
	switch {
	case !bot:
		return create | manage
	case t.Before(wire.ExpressionPermissionsFrom):
		return manage
	default:
		return create
	}
}

// EmojiCreatePermission is what lets a caller (a bot or not) create emoji at t: for a bot
// MANAGE_GUILD_EXPRESSIONS before Feb 23, 2026 and CREATE_GUILD_EXPRESSIONS from then on.
func EmojiCreatePermission(t time.Time, bot bool) uint64 {
	return createPermission(t, bot, wire.PermCreateGuildExpressions, wire.PermManageGuildExpressions)
}

// EventCreatePermission is what lets a caller (a bot or not) create scheduled events at t: for a
// bot MANAGE_EVENTS before Feb 23, 2026 and CREATE_EVENTS from then on.
func EventCreatePermission(t time.Time, bot bool) uint64 {
	return createPermission(t, bot, wire.PermCreateEvents, wire.PermManageEvents)
}

var emojiNameRE = regexp.MustCompile(`^[A-Za-z0-9_]{2,32}$`)

// emojiImage reads an emoji's image: a data URI of a PNG, JPEG, GIF or WebP image of at most
// 256 KiB; it returns the image's hash and whether it is animated (a GIF).
func emojiImage(uri string) (string, bool, error) {
	_, data, _ := cutDataURI(uri)
	if base64.StdEncoding.DecodedLen(len(data)) > wire.MaxEmojiImageBytes+2 {
		return "", false, wire.InvalidAt("image", "BINARY_TYPE_MAX_SIZE", "File cannot be larger than 256.0 kb.")
	}
	if raw, err := base64.StdEncoding.DecodeString(data); err == nil && len(raw) > wire.MaxEmojiImageBytes {
		return "", false, wire.InvalidAt("image", "BINARY_TYPE_MAX_SIZE", "File cannot be larger than 256.0 kb.")
	}
	h, err := guildaccess.ImageHash("image", uri)
	if err != nil {
		return "", false, err
	}
	animated := len(h) > 2 && h[:2] == "a_"
	if animated {
		h = h[2:]
	}
	return h, animated, nil
}

// cutDataURI splits data:image/<kind>;base64,<data>.
func cutDataURI(uri string) (kind, data string, ok bool) {
	const prefix = "data:image/"
	if len(uri) < len(prefix) || uri[:len(prefix)] != prefix {
		return "", "", false
	}
	for i := len(prefix); i+8 <= len(uri); i++ {
		if uri[i:i+8] == ";base64," {
			return uri[len(prefix):i], uri[i+8:], true
		}
	}
	return "", "", false
}

// emojiObject is the wire form of e, with its creator when known.
func (s *Service) emojiObject(q *guildaccess.Caller, e *store.GuildEmoji) (wire.Emoji, error) {
	out := wire.Emoji{ID: wire.Snowflake(e.ID), Name: e.Name, Roles: []string{}, RequireColons: true, Animated: e.Animated, Available: true}
	u, err := s.Store.GetUser(q.Ctx, e.CreatorID)
	switch {
	case err == nil:
		uo := guildaccess.UserObject(u)
		out.User = &uo
	case !errors.Is(err, store.ErrNotFound):
		return out, err
	}
	return out, nil
}

// listEmojis serves GET /guilds/{guild_id}/emojis: the guild's emoji, for a member.
func (s *Service) listEmojis(q *guildaccess.Caller) (any, error) {
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	list, err := s.Store.ListGuildEmojis(q.Ctx, a.Guild.ID)
	if err != nil {
		return nil, err
	}
	out := make([]wire.Emoji, 0, len(list))
	for i := range list {
		e, err := s.emojiObject(q, &list[i])
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// createEmoji serves POST /guilds/{guild_id}/emojis {name, image} (rules VER-1, ERR-1): name 2 to
// 32 characters of A-Z, a-z, 0-9 and _, image a data URI (png, jpeg, gif, webp) of at most 256
// KiB; needs EmojiCreatePermission (403 50013). Answers 201 with the emoji.
func (s *Service) createEmoji(q *guildaccess.Caller) (any, error) {
	var body wire.CreateEmoji
	if err := httpx.DecodeJSON(q.Request, &body); err != nil {
		return nil, err
	}
	name, _, err := httpx.OptionalString("name", body.Name)
	if err != nil {
		return nil, err
	}
	if !emojiNameRE.MatchString(name) {
		return nil, wire.InvalidAt("name", "BASE_TYPE_BAD_LENGTH", "Must be between 2 and 32 in length and contain only letters, digits and _.")
	}
	image, _, err := httpx.OptionalString("image", body.Image)
	if err != nil {
		return nil, err
	}
	if image == "" {
		return nil, wire.InvalidAt("image", "BASE_TYPE_REQUIRED", "This field is required")
	}
	hash, animated, err := emojiImage(image)
	if err != nil {
		return nil, err
	}
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	if a.Base()&EmojiCreatePermission(now, q.Bot) == 0 {
		return nil, wire.MissingPermissions()
	}
	e := &store.GuildEmoji{ID: s.IDs.Next(), GuildID: a.Guild.ID, Name: name, Image: hash, Animated: animated, CreatorID: q.UserID,
		CreatedAt: now}
	if err := s.Store.InsertGuildEmoji(q.Ctx, e); err != nil {
		return nil, err
	}
	out, err := s.emojiObject(q, e)
	if err != nil {
		return nil, err
	}
	return httpx.Reply{Status: http.StatusCreated, Body: out}, nil
}

// deleteEmoji serves DELETE /guilds/{guild_id}/emojis/{emoji_id}: 204; needs
// MANAGE_GUILD_EXPRESSIONS, or CREATE_GUILD_EXPRESSIONS for one's own emoji. 404 10014 for an
// unknown emoji.
func (s *Service) deleteEmoji(q *guildaccess.Caller) (any, error) {
	id, err := httpx.PathID(q.Request, "emoji_id")
	if err != nil {
		return nil, err
	}
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	e, err := s.Store.GetGuildEmoji(q.Ctx, a.Guild.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &wire.APIError{Status: http.StatusNotFound, Code: 10014, Message: "Unknown Emoji"}
	}
	if err != nil {
		return nil, err
	}
	perms := a.Base()
	if perms&wire.PermManageGuildExpressions == 0 && (e.CreatorID != q.UserID || perms&wire.PermCreateGuildExpressions == 0) {
		return nil, wire.MissingPermissions()
	}
	if err := s.Store.DeleteGuildEmoji(q.Ctx, a.Guild.ID, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return nil, nil
}

// listEvents serves GET /guilds/{guild_id}/scheduled-events: the guild's events, for a member.
func (s *Service) listEvents(q *guildaccess.Caller) (any, error) {
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	list, err := s.Store.ListGuildScheduledEvents(q.Ctx, a.Guild.ID)
	if err != nil {
		return nil, err
	}
	out := make([]wire.ScheduledEvent, 0, len(list))
	for i := range list {
		out = append(out, guildaccess.ScheduledEventObject(&list[i]))
	}
	return out, nil
}

// readEvent reads and checks the body of Create Guild Scheduled Event, short of its channel.
func readEvent(r *http.Request, now time.Time) (*store.GuildScheduledEvent, uint64, error) {
	var body wire.CreateScheduledEvent
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return nil, 0, err
	}
	e := &store.GuildScheduledEvent{Status: wire.EventStatusScheduled}
	var err error
	if e.Name, _, err = httpx.OptionalString("name", body.Name); err != nil {
		return nil, 0, err
	}
	if n := utf8.RuneCountInString(e.Name); n < 1 || n > wire.MaxEventNameChars || !utf8.ValidString(e.Name) {
		return nil, 0, wire.InvalidAt("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
	}
	if e.Description, _, err = httpx.OptionalString("description", body.Description); err != nil {
		return nil, 0, err
	}
	if utf8.RuneCountInString(e.Description) > wire.MaxEventDescriptionChars || !utf8.ValidString(e.Description) {
		return nil, 0, wire.InvalidAt("description", "BASE_TYPE_MAX_LENGTH", "Must be 1000 or fewer in length.")
	}
	if e.PrivacyLevel, err = httpx.IntField("privacy_level", body.PrivacyLevel, 0, 1<<30); err != nil {
		return nil, 0, err
	}
	if e.PrivacyLevel != wire.EventPrivacyGuildOnly {
		return nil, 0, wire.InvalidAt("privacy_level", "BASE_TYPE_CHOICES", "Value must be one of {2}.")
	}
	if e.EntityType, err = httpx.IntField("entity_type", body.EntityType, 0, 1<<30); err != nil {
		return nil, 0, err
	}
	if e.EntityType < wire.EventEntityStageInstance || e.EntityType > wire.EventEntityExternal {
		return nil, 0, wire.InvalidAt("entity_type", "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3}.")
	}
	if e.StartAt, err = httpx.TimeField("scheduled_start_time", body.ScheduledStartTime, true); err != nil {
		return nil, 0, err
	}
	if !e.StartAt.After(now) {
		return nil, 0, wire.InvalidAt("scheduled_start_time", "GUILD_SCHEDULED_EVENT_SCHEDULE_PAST", "Cannot schedule event in the past.")
	}
	external := e.EntityType == wire.EventEntityExternal
	if e.EndAt, err = httpx.TimeField("scheduled_end_time", body.ScheduledEndTime, external); err != nil {
		return nil, 0, err
	}
	if !e.EndAt.IsZero() && !e.EndAt.After(e.StartAt) {
		return nil, 0, wire.InvalidAt("scheduled_end_time", "GUILD_SCHEDULED_EVENT_END_BEFORE_START", "Cannot end an event before it starts.")
	}
	var channelID uint64
	if len(body.ChannelID) > 0 && string(body.ChannelID) != "null" {
		var id wire.Snowflake
		if json.Unmarshal(body.ChannelID, &id) != nil || id == 0 {
			return nil, 0, wire.InvalidAt("channel_id", "NUMBER_TYPE_COERCE", "The value is not snowflake.")
		}
		channelID = uint64(id)
	}
	var meta struct {
		Location *string `json:"location"`
	}
	if len(body.EntityMetadata) > 0 && string(body.EntityMetadata) != "null" && json.Unmarshal(body.EntityMetadata, &meta) != nil {
		return nil, 0, wire.InvalidAt("entity_metadata", "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	switch {
	case external && channelID != 0:
		return nil, 0, wire.InvalidAt("channel_id", "GUILD_SCHEDULED_EVENT_CHANNEL_NOT_ALLOWED", "An external event has no channel.")
	case external && (meta.Location == nil || *meta.Location == ""):
		return nil, 0, wire.InvalidAt("entity_metadata.location", "BASE_TYPE_REQUIRED", "This field is required")
	case external && (utf8.RuneCountInString(*meta.Location) > wire.MaxEventLocationChars || !utf8.ValidString(*meta.Location)):
		return nil, 0, wire.InvalidAt("entity_metadata.location", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
	case external:
		e.Location = *meta.Location
	case channelID == 0:
		return nil, 0, wire.InvalidAt("channel_id", "BASE_TYPE_REQUIRED", "This field is required")
	}
	return e, channelID, nil
}

// createEvent serves POST /guilds/{guild_id}/scheduled-events (rules VER-1, ERR-1): name,
// privacy_level 2, scheduled_start_time in the future, entity_type 1 (stage, channel_id of a
// stage channel), 2 (voice, channel_id of a voice channel) or 3 (external, with
// entity_metadata.location and scheduled_end_time); needs EventCreatePermission (403 50013).
// Answers with the event.
func (s *Service) createEvent(q *guildaccess.Caller) (any, error) {
	now := s.Clock.Now()
	e, channelID, err := readEvent(q.Request, now)
	if err != nil {
		return nil, err
	}
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	if a.Base()&EventCreatePermission(now, q.Bot) == 0 {
		return nil, wire.MissingPermissions()
	}
	if channelID != 0 {
		ch, err := s.Store.GetGuildChannel(q.Ctx, channelID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && ch.GuildID != a.Guild.ID) {
			return nil, wire.InvalidAt("channel_id", "CHANNEL_UNKNOWN", "Unknown channel.")
		}
		if err != nil {
			return nil, err
		}
		want := wire.ChannelGuildVoice
		if e.EntityType == wire.EventEntityStageInstance {
			want = wire.ChannelGuildStageVoice
		}
		if ch.Type != want {
			return nil, wire.InvalidAt("channel_id", "CHANNEL_TYPE_INVALID", "The channel's type does not match entity_type.")
		}
		e.ChannelID = channelID
	}
	e.ID, e.GuildID, e.CreatorID, e.CreatedAt = s.IDs.Next(), a.Guild.ID, q.UserID, now
	if err := s.Store.InsertGuildScheduledEvent(q.Ctx, e); err != nil {
		return nil, err
	}
	out := guildaccess.ScheduledEventObject(e)
	if u, err := s.Store.GetUser(q.Ctx, q.UserID); err == nil {
		uo := guildaccess.UserObject(u)
		out.Creator = &uo
	}
	return out, nil
}

// deleteEvent serves DELETE /guilds/{guild_id}/scheduled-events/{event_id}: 204; needs
// MANAGE_EVENTS, or CREATE_EVENTS for one's own event. 404 10070 for an unknown event.
func (s *Service) deleteEvent(q *guildaccess.Caller) (any, error) {
	id, err := httpx.PathID(q.Request, "event_id")
	if err != nil {
		return nil, err
	}
	a, err := s.MemberGuild(q)
	if err != nil {
		return nil, err
	}
	e, err := s.Store.GetGuildScheduledEvent(q.Ctx, a.Guild.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &wire.APIError{Status: http.StatusNotFound, Code: 10070, Message: "Unknown Guild Scheduled Event"}
	}
	if err != nil {
		return nil, err
	}
	perms := a.Base()
	if perms&wire.PermManageEvents == 0 && (e.CreatorID != q.UserID || perms&wire.PermCreateEvents == 0) {
		return nil, wire.MissingPermissions()
	}
	if err := s.Store.DeleteGuildScheduledEvent(q.Ctx, a.Guild.ID, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return nil, nil
}
