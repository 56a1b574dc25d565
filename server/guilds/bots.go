package guilds

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// BotNotifier delivers guild events to the bot sessions of the given users whose intents
// include intent (package gateway's Hub).
type BotNotifier interface {
	DispatchBots(userIDs []uint64, intent uint64, event string, data any)
	// DispatchBotsSplit is DispatchBots of with to the sessions whose intents also include
	// split, and of without to the others.
	DispatchBotsSplit(userIDs []uint64, intent, split uint64, event string, with, without any)
}

// Limits of the bot routes (the platform's).
const (
	MaxMembersList    = 1000 // GET /guilds/{id}/members?limit=
	MaxMessagesList   = 100  // GET /channels/{id}/messages?limit=
	DefaultMessages   = 50
	MaxNickChars      = 32
	MaxBioChars       = 190
	MaxImageDataBytes = 10 << 20 // decoded avatar or banner
)

// caller is who a bot route serves: a bot (Bot token) or a user (Bearer token with guilds).
type caller struct {
	*http.Request
	ctx    context.Context
	userID uint64
	appID  uint64
	bot    bool
	// readsContent tells whether the caller may read every message's content (see
	// mayReadContent): a user always, a bot when its application may read message content.
	readsContent bool
}

// who authenticates a bot or a user with the guilds scope.
func (s *Service) who(r *http.Request) (*caller, error) {
	auth := token.Auth{Store: s.Store, Clock: s.Clock}
	if httpx.Credential(r, "Bot") != "" {
		app, err := auth.Bot(r)
		if err != nil {
			return nil, err
		}
		return &caller{Request: r, ctx: r.Context(), userID: app.BotUserID, appID: app.ID, bot: true,
			readsContent: AppReadsMessageContent(app.Flags)}, nil
	}
	t, err := auth.Bearer(r)
	if err != nil {
		return nil, err
	}
	if !scopes.Has(t.Scopes, scopes.Guilds) {
		return nil, wire.MissingAccess()
	}
	return &caller{Request: r, ctx: r.Context(), userID: t.UserID, appID: t.AppID, readsContent: true}, nil
}

// callerRoute authenticates (who) and answers with h's value as JSON, nil as 204.
func (s *Service) callerRoute(h func(q *caller) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := func() (any, error) {
			q, err := s.who(r)
			if err != nil {
				return nil, err
			}
			return h(q)
		}()
		httpx.Answer(w, r, s.Logger, out, err)
	}
}

// RegisterBots adds the routes a bot needs (paths relative to the API base). GET
// /channels/{channel_id} and the message routes of guild channels share their paths with the DM
// routes: see Channels.
func (s *Service) RegisterBots(mux httpx.Router) {
	mux.HandleFunc("GET /guilds/{guild_id}", s.callerRoute(s.getGuild))
	mux.HandleFunc("GET /guilds/{guild_id}/roles", s.callerRoute(s.roles))
	mux.HandleFunc("GET /guilds/{guild_id}/roles/member-counts", s.callerRoute(s.roleMemberCounts))
	mux.HandleFunc("GET /guilds/{guild_id}/messages/search", s.callerRoute(s.searchMessages))
	mux.HandleFunc("GET /guilds/{guild_id}/members", s.callerRoute(s.members))
	mux.HandleFunc("GET /guilds/{guild_id}/members/{user_id}", s.callerRoute(s.member))
	mux.HandleFunc("PATCH /guilds/{guild_id}/members/@me", s.callerRoute(s.modifyMe))
	mux.HandleFunc("DELETE /users/@me/guilds/{guild_id}", s.callerRoute(s.leave))
	mux.HandleFunc("GET /channels/{channel_id}/messages/{message_id}", s.callerRoute(s.getMessage))
	s.registerPins(mux)
	s.registerSlowmode(mux)
	s.registerExpressions(mux)
	s.registerPrune(mux)
	s.registerInvites(mux)
}

// guildMessageRoutes are the DM routes whose paths guild channels share.
var guildMessageRoutes = map[string]func(s *Service) func(q *caller) (any, error){
	"GET /channels/{channel_id}":                          func(s *Service) func(*caller) (any, error) { return s.getChannel },
	"POST /channels/{channel_id}/messages":                func(s *Service) func(*caller) (any, error) { return s.sendMessage },
	"GET /channels/{channel_id}/messages":                 func(s *Service) func(*caller) (any, error) { return s.listMessages },
	"PATCH /channels/{channel_id}/messages/{message_id}":  func(s *Service) func(*caller) (any, error) { return s.editMessage },
	"DELETE /channels/{channel_id}/messages/{message_id}": func(s *Service) func(*caller) (any, error) { return s.deleteMessage },
}

// Channels wraps the router the DM routes register on: a request to a shared message route
// goes to the guild channel handler when its channel is a guild channel or it comes with a bot
// token, else to the DM handler.
func (s *Service) Channels(dm httpx.Router) httpx.Router { return channelRouter{Router: dm, s: s} }

type channelRouter struct {
	httpx.Router
	s *Service
}

func (c channelRouter) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	guild, ok := guildMessageRoutes[pattern]
	if !ok {
		c.Router.HandleFunc(pattern, h)
		return
	}
	g := c.s.callerRoute(guild(c.s))
	c.Router.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if httpx.Credential(r, "Bot") != "" || c.s.isGuildChannel(r) {
			g(w, r)
			return
		}
		h(w, r)
	})
}

// isGuildChannel tells whether the request's channel_id names a guild channel.
func (s *Service) isGuildChannel(r *http.Request) bool {
	id, ok := wire.ParseSnowflake(r.PathValue("channel_id"))
	if !ok {
		return false
	}
	_, err := s.Store.GetGuildChannel(r.Context(), uint64(id))
	return err == nil
}

// memberGuild loads the path's guild and the caller's access: 404 10004 for an unknown guild,
// 403 50001 for a non-member.
func (s *Service) memberGuild(q *caller) (*Access, error) {
	id, err := pathID(q.Request, "guild_id")
	if err != nil {
		return nil, err
	}
	return s.memberAccess(q, id)
}

// memberAccess loads guild id and the caller's access: 404 10004 for an unknown guild, 403 50001
// for a non-member.
func (s *Service) memberAccess(q *caller, id uint64) (*Access, error) {
	g, err := s.Store.GetGuild(q.ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownGuild()
	}
	if err != nil {
		return nil, err
	}
	a, err := LoadAccess(q.ctx, s.Store, g, q.userID)
	if err != nil {
		return nil, err
	}
	if !a.IsMember() {
		return nil, wire.MissingAccess()
	}
	return a, nil
}

// getGuild serves GET /guilds/{guild_id}[?with_counts=true].
func (s *Service) getGuild(q *caller) (any, error) {
	withCounts := false
	if v := q.URL.Query(); v.Has("with_counts") {
		b, err := strconv.ParseBool(v.Get("with_counts"))
		if err != nil {
			return nil, wire.InvalidAt("with_counts", "BOOLEAN_TYPE_COERCE", "Must be either true or false.")
		}
		withCounts = b
	}
	a, err := s.memberGuild(q)
	if err != nil {
		return nil, err
	}
	out, err := GuildObject(q.ctx, s.Store, a.Guild)
	if err != nil {
		return nil, err
	}
	if withCounts {
		n, err := s.Store.CountGuildMembers(q.ctx, a.Guild.ID)
		if err != nil {
			return nil, err
		}
		out.ApproximateMemberCount = &n
	}
	return out, nil
}

// roleMemberCounts serves GET /guilds/{guild_id}/roles/member-counts (rule GLD-4): a map of each
// role's id to how many members have it, 0 for a role nobody has; @everyone is left out.
func (s *Service) roleMemberCounts(q *caller) (any, error) {
	a, err := s.memberGuild(q)
	if err != nil {
		return nil, err
	}
	counts, err := s.Store.CountRoleMembers(q.ctx, a.Guild.ID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(a.Roles))
	for _, r := range a.Roles {
		if r.ID != a.Guild.ID {
			out[strconv.FormatUint(r.ID, 10)] = counts[r.ID]
		}
	}
	return out, nil
}

// roles serves GET /guilds/{guild_id}/roles (rule ROLE-1).
func (s *Service) roles(q *caller) (any, error) {
	a, err := s.memberGuild(q)
	if err != nil {
		return nil, err
	}
	g, err := GuildObject(q.ctx, s.Store, a.Guild)
	return g.Roles, err
}

// queryID reads an optional snowflake query parameter.
func queryID(r *http.Request, name string) (uint64, error) { return valuesID(r.URL.Query(), name) }

// valuesID reads an optional snowflake of a query.
func valuesID(v url.Values, name string) (uint64, error) {
	if !v.Has(name) {
		return 0, nil
	}
	id, ok := wire.ParseSnowflake(v.Get(name))
	if !ok {
		return 0, wire.InvalidAt(name, "NUMBER_TYPE_COERCE", "The value is not snowflake.")
	}
	return uint64(id), nil
}

// queryLimit reads ?limit= between 1 and max, def when absent.
func queryLimit(r *http.Request, def, max int) (int, error) {
	v := r.URL.Query()
	if !v.Has("limit") {
		return def, nil
	}
	n, err := strconv.Atoi(v.Get("limit"))
	if err != nil {
		return 0, wire.InvalidAt("limit", "NUMBER_TYPE_COERCE", "The value is not int.")
	}
	if n < 1 || n > max {
		return 0, wire.InvalidAt("limit", "NUMBER_TYPE_MAX", "Must be between 1 and "+strconv.Itoa(max)+".")
	}
	return n, nil
}

// members serves GET /guilds/{guild_id}/members?limit=&after=: members by user id.
func (s *Service) members(q *caller) (any, error) {
	limit, err := queryLimit(q.Request, 1, MaxMembersList)
	if err != nil {
		return nil, err
	}
	after, err := queryID(q.Request, "after")
	if err != nil {
		return nil, err
	}
	a, err := s.memberGuild(q)
	if err != nil {
		return nil, err
	}
	list, err := s.Store.ListGuildMembers(q.ctx, a.Guild.ID, after, limit)
	if err != nil {
		return nil, err
	}
	return s.memberObjects(q.ctx, a.Guild.ID, list)
}

func (s *Service) memberObjects(ctx context.Context, guildID uint64, list []store.GuildMember) ([]wire.Member, error) {
	out := make([]wire.Member, 0, len(list))
	for i := range list {
		roles, err := s.Store.ListMemberRoles(ctx, guildID, list[i].UserID)
		if err != nil {
			return nil, err
		}
		m, err := MemberObject(ctx, s.Store, &list[i], roles, true)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// member serves GET /guilds/{guild_id}/members/{user_id}.
func (s *Service) member(q *caller) (any, error) {
	userID, err := pathID(q.Request, "user_id")
	if err != nil {
		return nil, err
	}
	a, err := s.memberGuild(q)
	if err != nil {
		return nil, err
	}
	return LoadMember(q.ctx, s.Store, a.Guild.ID, userID, true)
}

// imageHash reads an image data URI (data:image/png|jpeg|gif|webp;base64,...) and returns the
// hash it is kept as.
func imageHash(field, uri string) (string, error) {
	bad := wire.InvalidAt(field, "IMAGE_INVALID", "Invalid image data")
	rest, ok := strings.CutPrefix(uri, "data:image/")
	if !ok {
		return "", bad
	}
	kind, data, ok := strings.Cut(rest, ";base64,")
	switch {
	case !ok:
		return "", bad
	case kind != "png" && kind != "jpeg" && kind != "gif" && kind != "webp":
		return "", bad
	case base64.StdEncoding.DecodedLen(len(data)) > MaxImageDataBytes:
		return "", wire.InvalidAt(field, "BINARY_TYPE_MAX_SIZE", "File cannot be larger than 10240.0 kb.")
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw) == 0 {
		return "", bad
	}
	sum := sha256.Sum256(raw)
	h := hex.EncodeToString(sum[:16])
	if kind == "gif" {
		h = "a_" + h
	}
	return h, nil
}

// optionalString reads a field of a PATCH body: absent (keep), null (clear) or a string.
func optionalString(field string, raw json.RawMessage) (v string, set bool, err error) {
	if len(raw) == 0 {
		return "", false, nil
	}
	if string(raw) == "null" {
		return "", true, nil
	}
	if json.Unmarshal(raw, &v) != nil {
		return "", false, wire.InvalidAt(field, "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
	}
	return v, true, nil
}

// modifyMe serves PATCH /guilds/{guild_id}/members/@me (rule MEM-1): a bot sets its nick,
// avatar, banner and bio in the guild; null clears one. The guild's bots get
// GUILD_MEMBER_UPDATE (GW-6).
func (s *Service) modifyMe(q *caller) (any, error) {
	if !q.bot {
		return nil, wire.MissingAccess()
	}
	var body wire.ModifyCurrentMember
	if err := httpx.DecodeJSON(q.Request, &body); err != nil {
		return nil, err
	}
	type change struct {
		field string
		raw   json.RawMessage
		apply func(m *store.GuildMember, v string) error
	}
	changes := []change{
		{"nick", body.Nick, func(m *store.GuildMember, v string) error {
			if n := utf8.RuneCountInString(v); n > MaxNickChars || !utf8.ValidString(v) {
				return wire.InvalidAt("nick", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 32 in length.")
			}
			m.Nick = v
			return nil
		}},
		{"avatar", body.Avatar, func(m *store.GuildMember, v string) (err error) {
			if v != "" {
				v, err = imageHash("avatar", v)
			}
			m.Avatar = v
			return err
		}},
		{"banner", body.Banner, func(m *store.GuildMember, v string) (err error) {
			if v != "" {
				v, err = imageHash("banner", v)
			}
			m.Banner = v
			return err
		}},
		{"bio", body.Bio, func(m *store.GuildMember, v string) error {
			if utf8.RuneCountInString(v) > MaxBioChars || !utf8.ValidString(v) {
				return wire.InvalidAt("bio", "BASE_TYPE_MAX_LENGTH", "Must be 190 or fewer in length.")
			}
			m.Bio = v
			return nil
		}},
	}
	a, err := s.memberGuild(q)
	if err != nil {
		return nil, err
	}
	m := *a.Member
	for _, c := range changes {
		v, set, err := optionalString(c.field, c.raw)
		if err != nil {
			return nil, err
		}
		if !set {
			continue
		}
		if c.field == "nick" && a.Base()&PermChangeNickname == 0 {
			return nil, wire.MissingPermissions()
		}
		if err := c.apply(&m, v); err != nil {
			return nil, err
		}
	}
	if err := s.Store.PutGuildMember(q.ctx, &m); err != nil {
		return nil, err
	}
	out, err := LoadMember(q.ctx, s.Store, a.Guild.ID, q.userID, true)
	if err != nil {
		return nil, err
	}
	event := out
	gid := wire.Snowflake(a.Guild.ID)
	event.GuildID = &gid
	s.memberEvent(q.ctx, a.Guild.ID, gwire.EventGuildMemberUpdate, event)
	return out, nil
}

// leave serves DELETE /users/@me/guilds/{guild_id}: the caller leaves the guild (the owner
// cannot: 400 50055); the guild's bots get GUILD_MEMBER_REMOVE (GW-6).
func (s *Service) leave(q *caller) (any, error) {
	a, err := s.memberGuild(q)
	if err != nil {
		return nil, err
	}
	if a.Guild.OwnerID == q.userID {
		return nil, &wire.APIError{Status: http.StatusBadRequest, Code: 50055, Message: "Invalid Guild"}
	}
	u, err := s.Store.GetUser(q.ctx, q.userID)
	if err != nil {
		return nil, err
	}
	if err := s.Store.DeleteGuildMember(q.ctx, a.Guild.ID, q.userID); err != nil {
		return nil, err
	}
	bots := s.botMembers(q.ctx, a.Guild.ID)
	if s.Bots != nil {
		s.Bots.DispatchBots(append(bots, q.userID), gwire.IntentGuildMembers, gwire.EventGuildMemberRemove,
			wire.MemberRemove{GuildID: wire.Snowflake(a.Guild.ID), User: userObject(u)})
	}
	if s.OnMemberLeft != nil {
		s.OnMemberLeft(a.Guild.ID, q.userID)
	}
	return nil, nil
}

// MemberJoined tells the guild's bots that userID joined (GUILD_MEMBER_ADD, GW-6).
func (s *Service) MemberJoined(ctx context.Context, guildID, userID uint64) {
	s.memberChanged(ctx, guildID, userID, gwire.EventGuildMemberAdd)
}

// memberChanged sends event (GUILD_MEMBER_ADD or GUILD_MEMBER_UPDATE) with userID's member, its
// guild_id set, to the guild's bots.
func (s *Service) memberChanged(ctx context.Context, guildID, userID uint64, event string) {
	m, err := LoadMember(ctx, s.Store, guildID, userID, true)
	if err != nil {
		s.Logger.Warn("guild member event not sent", "event", event, "guild_id", guildID, "err", err)
		return
	}
	gid := wire.Snowflake(guildID)
	m.GuildID = &gid
	s.memberEvent(ctx, guildID, event, m)
}

// memberEvent sends a member event to the guild's bots with GUILD_MEMBERS.
func (s *Service) memberEvent(ctx context.Context, guildID uint64, event string, data any) {
	if s.Bots != nil {
		s.Bots.DispatchBots(s.botMembers(ctx, guildID), gwire.IntentGuildMembers, event, data)
	}
}

// botMembers returns the ids of the guild's bot members (logged and empty on a store failure:
// events are best effort, as the platform's).
func (s *Service) botMembers(ctx context.Context, guildID uint64) []uint64 {
	var out []uint64
	after := uint64(0)
	for {
		list, err := s.Store.ListGuildMembers(ctx, guildID, after, MaxMembersList)
		if err != nil {
			s.Logger.Warn("guild bots not listed", "guild_id", guildID, "err", err)
			return out
		}
		for _, m := range list {
			if u, err := s.Store.GetUser(ctx, m.UserID); err == nil && u.Bot {
				out = append(out, m.UserID)
			}
		}
		if len(list) < MaxMembersList {
			return out
		}
		after = list[len(list)-1].UserID
	}
}

// guildChannel loads the path's channel of a guild the caller is in, with the caller's
// permissions there: 404 10003 for an unknown channel (or a DM channel), 403 50001 for one the
// caller cannot view.
func (s *Service) guildChannel(q *caller) (*store.GuildChannel, *Access, uint64, error) {
	id, err := pathID(q.Request, "channel_id")
	if err != nil {
		return nil, nil, 0, err
	}
	return s.channelAccess(q, id)
}

// channelAccess is guildChannel for channel id.
func (s *Service) channelAccess(q *caller, id uint64) (*store.GuildChannel, *Access, uint64, error) {
	ch, err := s.Store.GetGuildChannel(q.ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, 0, wire.UnknownChannel()
	}
	if err != nil {
		return nil, nil, 0, err
	}
	g, err := s.Store.GetGuild(q.ctx, ch.GuildID)
	if err != nil {
		return nil, nil, 0, err
	}
	a, err := LoadAccess(q.ctx, s.Store, g, q.userID)
	if err != nil {
		return nil, nil, 0, err
	}
	perms, err := a.Channel(q.ctx, s.Store, ch)
	if err != nil {
		return nil, nil, 0, err
	}
	if perms&PermViewChannel == 0 {
		return nil, nil, 0, wire.MissingAccess()
	}
	return ch, a, perms, nil
}

// getChannel serves GET /channels/{channel_id} for a guild channel.
func (s *Service) getChannel(q *caller) (any, error) {
	ch, _, _, err := s.guildChannel(q)
	if err != nil {
		return nil, err
	}
	return FullChannel(q.ctx, s.Store, ch)
}

var mentionRE = regexp.MustCompile(`<@!?([0-9]{1,20})>`)

// mentions returns the members of the guild the content mentions, once each.
func (s *Service) mentions(ctx context.Context, guildID uint64, content string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	for _, m := range mentionRE.FindAllStringSubmatch(content, 100) {
		id, ok := wire.ParseSnowflake(m[1])
		if !ok || seen[uint64(id)] {
			continue
		}
		seen[uint64(id)] = true
		_, err := s.Store.GetGuildMember(ctx, guildID, uint64(id))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, uint64(id))
	}
	return out, nil
}

func userObject(u *store.User) wire.User {
	out := wire.User{ID: wire.Snowflake(u.ID), Username: u.Username, Discriminator: "0", Bot: u.Bot}
	if u.GlobalName != "" {
		n := u.GlobalName
		out.GlobalName = &n
	}
	return out
}

// messageObject is the wire form of a guild message, with its author's member and its
// mentions' members, its message_reference and message_snapshots, and for a reply the message
// it answers (referenced_message, null once deleted; without its own referenced_message).
func (s *Service) messageObject(ctx context.Context, m *store.GuildMessage) (wire.GuildMessage, error) {
	out, err := s.messageFields(ctx, m)
	if err != nil || m.Reference == nil || m.Reference.Type != store.ReferenceReply {
		return out, err
	}
	out.ReferencedMessage.Present = true
	ref, err := s.Store.GetGuildMessage(ctx, m.Reference.ChannelID, m.Reference.MessageID)
	if errors.Is(err, store.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	r, err := s.messageFields(ctx, ref)
	out.ReferencedMessage.Message = &r
	return out, err
}

// messageFields is messageObject without referenced_message.
func (s *Service) messageFields(ctx context.Context, m *store.GuildMessage) (wire.GuildMessage, error) {
	out := wire.GuildMessage{ID: wire.Snowflake(m.ID), ChannelID: wire.Snowflake(m.ChannelID), GuildID: wire.Snowflake(m.GuildID),
		Content: m.Content, Timestamp: Timestamp(m.CreatedAt), Mentions: []wire.Mention{}, MentionRoles: []string{},
		Attachments: []wire.Attachment{}, Embeds: []struct{}{}, Components: []struct{}{}}
	if !m.EditedAt.IsZero() {
		e := Timestamp(m.EditedAt)
		out.EditedTimestamp = &e
	}
	pinnedAt, err := s.Store.GuildMessagePinnedAt(ctx, m.ChannelID, m.ID)
	if err != nil {
		return out, err
	}
	out.Pinned = !pinnedAt.IsZero()
	author, err := s.Store.GetUser(ctx, m.AuthorID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		out.Author = wire.User{ID: wire.Snowflake(m.AuthorID), Discriminator: "0"}
	case err != nil:
		return out, err
	default:
		out.Author = userObject(author)
	}
	if mem, err := LoadMember(ctx, s.Store, m.GuildID, m.AuthorID, false); err == nil {
		out.Member = &mem
	} else if !isAPIError(err) {
		return out, err
	}
	for _, id := range m.Mentions {
		u, err := s.Store.GetUser(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return out, err
		}
		men := wire.Mention{User: userObject(u)}
		if mem, err := LoadMember(ctx, s.Store, m.GuildID, id, false); err == nil {
			men.Member = &mem
		} else if !isAPIError(err) {
			return out, err
		}
		out.Mentions = append(out.Mentions, men)
	}
	if out.Attachments, err = s.attachmentObjects(ctx, m); err != nil {
		return out, err
	}
	return out, s.referenceFields(ctx, m, &out)
}

func isAPIError(err error) bool {
	var e *wire.APIError
	return errors.As(err, &e)
}

// checkContent checks a message body's content: 1 to 2000 characters (50006 when empty).
func checkContent(content *string, required bool) error {
	switch {
	case content == nil && !required:
		return nil
	case content == nil || *content == "":
		return &wire.APIError{Status: http.StatusBadRequest, Code: 50006, Message: "Cannot send an empty message"}
	case utf8.RuneCountInString(*content) > wire.MaxMessageContentChars || !utf8.ValidString(*content):
		return wire.InvalidAt("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
	}
	return nil
}

// textChannel tells whether messages may be sent in a channel of type t.
func textChannel(t int) bool { return t == wire.ChannelGuildText || t == wire.ChannelGuildNews }

// sendMessage serves POST /channels/{channel_id}/messages for a guild text channel: needs
// VIEW_CHANNEL and SEND_MESSAGES; the guild's bots that can view the channel get MESSAGE_CREATE
// with guild_id, channel_type, mentions and member. A message_reference makes it a reply or a
// forward (see reference).
func (s *Service) sendMessage(q *caller) (any, error) {
	req, content, ref, err := readSend(q.Request)
	if err != nil {
		return nil, err
	}
	ch, _, perms, err := s.guildChannel(q)
	if err != nil {
		return nil, err
	}
	if !textChannel(ch.Type) {
		return nil, &wire.APIError{Status: http.StatusBadRequest, Code: 50008, Message: "Cannot send messages in a non-text channel"}
	}
	if perms&PermSendMessages == 0 || (len(req.files) > 0 && perms&PermAttachFiles == 0) {
		return nil, wire.MissingPermissions()
	}
	if slow, err := s.slowmodeCheck(q, ch, perms); slow != nil || err != nil {
		return slow, err
	}
	atts, err := s.attachmentsOf(req, nil)
	if err != nil {
		return nil, err
	}
	m := &store.GuildMessage{ID: s.IDs.Next(), ChannelID: ch.ID, GuildID: ch.GuildID, AuthorID: q.userID, Content: content,
		CreatedAt: s.Clock.Now()}
	if err := s.reference(q, ch, perms, ref, m); err != nil {
		return nil, err
	}
	if m.Mentions, err = s.mentions(q.ctx, ch.GuildID, m.Content); err != nil {
		return nil, err
	}
	if err := s.saveMessage(q.ctx, m, true, atts); err != nil {
		return nil, err
	}
	s.slowmodeSent(q, ch)
	s.memberSeen(q, ch.GuildID)
	out, err := s.messageObject(q.ctx, m)
	if err != nil {
		return nil, err
	}
	out.Nonce = req.body.Nonce
	s.messageEvent(q.ctx, ch, gwire.EventMessageCreate, out)
	out, _ = contentFor(out, q.userID, q.readsContent)
	return out, nil
}

// messageEvent sends a message event to the guild's bots with GUILD_MESSAGES that can view the
// channel, with the channel's type. A message's content reaches a bot session only with the
// MESSAGE_CONTENT intent, or when the bot is its author or mentioned in it (mayReadContent); the
// others get it without content, embeds, attachments and components (contentFor).
func (s *Service) messageEvent(ctx context.Context, ch *store.GuildChannel, event string, m any) {
	if s.Bots == nil {
		return
	}
	to := s.channelViewers(ctx, ch)
	msg, ok := m.(wire.GuildMessage)
	if !ok {
		s.Bots.DispatchBots(to, gwire.IntentGuildMessages, event, m)
		return
	}
	t := ch.Type
	msg.ChannelType = &t
	var always []uint64
	for _, id := range to {
		// A session with MESSAGE_CONTENT reads everything; what one without it reads depends on
		// the bot (its own messages, its mentions).
		redacted, changed := contentFor(msg, id, false)
		if !changed {
			always = append(always, id)
			continue
		}
		s.Bots.DispatchBotsSplit([]uint64{id}, gwire.IntentGuildMessages, gwire.IntentMessageContent, event, msg, redacted)
	}
	s.Bots.DispatchBots(always, gwire.IntentGuildMessages, event, msg)
}

// readable loads the path's channel for reading its messages: VIEW_CHANNEL and
// READ_MESSAGE_HISTORY.
func (s *Service) readable(q *caller) (*store.GuildChannel, error) {
	ch, _, perms, err := s.guildChannel(q)
	if err != nil {
		return nil, err
	}
	if perms&PermReadMessageHistory == 0 {
		return nil, wire.MissingPermissions()
	}
	return ch, nil
}

// listMessages serves GET /channels/{channel_id}/messages?limit=&before=|after=|around=:
// newest first, limit 1 to 100 (default 50). A bot whose application may not read message
// content gets them as a gateway session without MESSAGE_CONTENT does (contentFor).
func (s *Service) listMessages(q *caller) (any, error) {
	limit, err := queryLimit(q.Request, DefaultMessages, MaxMessagesList)
	if err != nil {
		return nil, err
	}
	var page [3]uint64
	given := 0
	for i, name := range []string{"before", "after", "around"} {
		if page[i], err = queryID(q.Request, name); err != nil {
			return nil, err
		}
		if q.URL.Query().Has(name) {
			given++
		}
	}
	if given > 1 {
		return nil, wire.InvalidAt("around", "PAGINATION_EXCLUSIVE", "Give at most one of before, after and around.")
	}
	ch, err := s.readable(q)
	if err != nil {
		return nil, err
	}
	var list []store.GuildMessage
	if around := page[2]; around != 0 {
		older, err := s.Store.ListGuildMessages(q.ctx, ch.ID, store.MessagePage{Before: around + 1, Limit: (limit + 1) / 2})
		if err != nil {
			return nil, err
		}
		newer, err := s.Store.ListGuildMessages(q.ctx, ch.ID, store.MessagePage{After: around, Limit: limit / 2})
		if err != nil {
			return nil, err
		}
		list = append(newer, older...)
	} else if list, err = s.Store.ListGuildMessages(q.ctx, ch.ID, store.MessagePage{Before: page[0], After: page[1], Limit: limit}); err != nil {
		return nil, err
	}
	return readerMessages(s, q, list, func(m *store.GuildMessage) *store.GuildMessage { return m })
}

// message loads the path's message of ch: 404 10008 when it is not there.
func (s *Service) message(q *caller, ch *store.GuildChannel) (*store.GuildMessage, error) {
	id, err := pathID(q.Request, "message_id")
	if err != nil {
		return nil, err
	}
	m, err := s.Store.GetGuildMessage(q.ctx, ch.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownMessage()
	}
	return m, err
}

// getMessage serves GET /channels/{channel_id}/messages/{message_id}, with content as
// listMessages.
func (s *Service) getMessage(q *caller) (any, error) {
	ch, err := s.readable(q)
	if err != nil {
		return nil, err
	}
	m, err := s.message(q, ch)
	if err != nil {
		return nil, err
	}
	return s.readerMessage(q, m)
}

// readerMessage is the wire form of m as the caller may read it (contentFor).
func (s *Service) readerMessage(q *caller, m *store.GuildMessage) (wire.GuildMessage, error) {
	out, err := s.messageObject(q.ctx, m)
	if err != nil {
		return out, err
	}
	out, _ = contentFor(out, q.userID, q.readsContent)
	return out, nil
}

// readerMessages is readerMessage of the message of each item of list.
func readerMessages[T any](s *Service, q *caller, list []T, message func(*T) *store.GuildMessage) ([]wire.GuildMessage, error) {
	out := make([]wire.GuildMessage, 0, len(list))
	for i := range list {
		m, err := s.readerMessage(q, message(&list[i]))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// editMessage serves PATCH /channels/{channel_id}/messages/{message_id}: the author replaces
// the content (50005 for another's message) and, with an attachments array, the attachments the
// message keeps, with their description and is_spoiler (rule ATT-1); new files may come with a
// multipart body (ATTACH_FILES). MESSAGE_UPDATE follows.
func (s *Service) editMessage(q *caller) (any, error) {
	req, err := readMessageRequest(q.Request)
	if err != nil {
		return nil, err
	}
	content := req.body.Content
	if content != nil && *content != "" { // "" may leave a message of attachments only: checked below
		if err := checkContent(content, false); err != nil {
			return nil, err
		}
	}
	ch, _, perms, err := s.guildChannel(q)
	if err != nil {
		return nil, err
	}
	m, err := s.message(q, ch)
	if err != nil {
		return nil, err
	}
	if m.AuthorID != q.userID {
		return nil, &wire.APIError{Status: http.StatusForbidden, Code: 50005, Message: "Cannot edit a message authored by another user"}
	}
	if content != nil && m.Snapshot != nil {
		return nil, forwardContentError()
	}
	if len(req.files) > 0 && perms&PermAttachFiles == 0 {
		return nil, wire.MissingPermissions()
	}
	var atts []store.GuildAttachment // nil: unchanged
	if req.listed || len(req.files) > 0 {
		if m.Snapshot != nil && len(req.files) > 0 {
			return nil, wire.InvalidAt("attachments", "MESSAGE_FORWARD_ATTACHMENTS_NOT_ALLOWED",
				"A forwarded message cannot have attachments.")
		}
		existing, err := s.Store.ListGuildAttachments(q.ctx, ch.ID, m.ID)
		if err != nil {
			return nil, err
		}
		if atts, err = s.attachmentsOf(req, existing); err != nil {
			return nil, err
		}
		if atts == nil {
			atts = []store.GuildAttachment{} // all removed
		}
	}
	if content != nil {
		m.Content = *content
		if m.Mentions, err = s.mentions(q.ctx, ch.GuildID, m.Content); err != nil {
			return nil, err
		}
	}
	if m.Content == "" && m.Snapshot == nil {
		n := len(atts)
		if atts == nil {
			kept, err := s.Store.ListGuildAttachments(q.ctx, ch.ID, m.ID)
			if err != nil {
				return nil, err
			}
			n = len(kept)
		}
		if n == 0 {
			return nil, &wire.APIError{Status: http.StatusBadRequest, Code: 50006, Message: "Cannot send an empty message"}
		}
	}
	m.EditedAt = s.Clock.Now()
	if err := s.saveMessage(q.ctx, m, false, atts); err != nil {
		return nil, err
	}
	out, err := s.messageObject(q.ctx, m)
	if err != nil {
		return nil, err
	}
	s.messageEvent(q.ctx, ch, gwire.EventMessageUpdate, out)
	out, _ = contentFor(out, q.userID, q.readsContent)
	return out, nil
}

// deleteMessage serves DELETE /channels/{channel_id}/messages/{message_id}: the author, or a
// member with MANAGE_MESSAGES; 204, and MESSAGE_DELETE.
func (s *Service) deleteMessage(q *caller) (any, error) {
	ch, _, perms, err := s.guildChannel(q)
	if err != nil {
		return nil, err
	}
	m, err := s.message(q, ch)
	if err != nil {
		return nil, err
	}
	if m.AuthorID != q.userID && perms&PermManageMessages == 0 {
		return nil, wire.MissingPermissions()
	}
	if err := s.Store.DeleteGuildMessage(q.ctx, ch.ID, m.ID); err != nil {
		return nil, err
	}
	s.messageEvent(q.ctx, ch, gwire.EventMessageDelete, wire.GuildMessageDelete{ID: wire.Snowflake(m.ID),
		ChannelID: wire.Snowflake(ch.ID), GuildID: wire.Snowflake(ch.GuildID)})
	return nil, nil
}
