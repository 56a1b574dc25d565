// Package guilds serves the guilds a user is in and their channels, and guild invites: the part
// of the platform's communities that games see through the SDK's channel-linking UI.
//
// # Routes (under /api/v10)
//
//	GET  /users/@me/guilds            Bearer (guilds) or Bot -> 200 [partial guild {id, name, icon, owner, permissions, features}];
//	                                  a bot may give ?shard= (rule GLD-1)
//	GET  /guilds/{guild_id}/channels  Bearer (guilds, member) -> 200 [channel], sorted by position (rule GCH-1)
//	GET  /invites/{code}              anyone               -> 200 invite
//	POST /invites/{code}              Bearer (guilds.join) -> 200 invite; the caller joins the guild, using the invite
//
// The routes a bot needs (RegisterBots; Bearer with guilds, or Bot), with the platform's
// objects: GET /guilds/{id}, GET /guilds/{id}/roles, GET /guilds/{id}/members?limit=&after=,
// GET /guilds/{id}/members/{user}, PATCH /guilds/{id}/members/@me (bots, rule MEM-1),
// DELETE /users/@me/guilds/{id}, and GET /channels/{id} and a guild text channel's messages:
// POST, GET (before/after/around/limit), GET, PATCH and DELETE /channels/{id}/messages[/{mid}],
// whose paths the DM routes share (Channels). Permissions come from @everyone, roles and
// channel overwrites (Access, rule PERM-1); bots get GUILD_MEMBER_* and MESSAGE_* events by
// intent through Service.Bots, a message's content only with MESSAGE_CONTENT or when the bot
// wrote the message or is mentioned in it.
//
// A channel is {id, type, guild_id, name, position, parent_id, is_linkable,
// is_viewable_and_writeable_by_all_members, linked_lobby?}: type is the platform's channel type,
// parent_id the id of its category or null (GCH-1), is_linkable true for a text channel the
// caller may link to a lobby, linked_lobby {application_id, lobby_id} when a live lobby links it.
//
// # Permissions
//
// A member's permissions are @everyone's (DefaultEveryone for a guild without stored roles)
// and those of the member's roles, plus MANAGE_CHANNELS for a member given it, or every bit for
// the owner and ADMINISTRATOR. The owner and members with MANAGE_CHANNELS may link the guild's
// text channels to lobbies (see package lobbies, PATCH /lobbies/{id}/channel-linking).
// Permissions in the partial guild are the platform's string-serialized bits.
//
// # Invites
//
// Lobby channel invites (rule LOB-5) are made by package lobbies: single use, valid one hour,
// and only the lobby member they were made for may accept them (403 50001 for anyone else).
// Bots make channel invites with Create Channel Invite and list them with Get Channel Invites
// (invites.go): an invite may give roles on acceptance and may be for target users only, a list
// managed under /invites/{code}/target-users, replaced from a CSV upload by a job (targetjobs.go;
// rules INVT-1, INVT-2, INVT-3, TU-1, ROLE-2). An invite that is used up or expired is unknown
// (404 10006); max_uses 0 is unlimited, max_age 0 never expires. Provisional accounts cannot join
// guilds (403 50001). The invite object carries its inviter. AcceptInvite is the one code path
// that joins a guild by invite: the API's POST /invites/{code} and the service's web page
// /invite/{code} (package oauth) both call it.
//
// # Errors
//
// 401 without a valid token; 403 50001 for a token without the scope, a non-member listing
// channels, a provisional account accepting an invite, a user accepting an invite made for
// another; 404 10004 Unknown Guild, 10006 Unknown
// Invite; 400 50035 naming a malformed path id.
//
// Guilds cannot be made through the public API (SPEC 4.2: "Create guild: removed"); Create makes
// them for dev mode seeding and the dev route POST /dev/guilds.
package guilds

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"sdkpp/server/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/server/users"
	"sdkpp/wire"
)

// Permission bits of the partial guild (the platform's values).
const (
	PermManageChannels uint64 = 1 << 4
	PermViewChannel    uint64 = 1 << 10
	PermSendMessages   uint64 = 1 << 11
	permAll            uint64 = 1<<53 - 1
)

// Limits of Create.
const (
	MaxNameChars      = 100 // guild and channel names
	MaxChannelsCreate = 50  // channels of one Create call
)

// Service serves the guild routes. Set its fields before Register.
type Service struct {
	Store  store.Store
	Clock  clock.Clock
	IDs    *snowflake.Generator
	Logger *slog.Logger
	// Bots delivers guild events to bot sessions (set before serving); nil sends none.
	Bots BotNotifier
	// OnMemberLeft, when set, is told that a member left a guild (after the GUILD_MEMBER_REMOVE).
	OnMemberLeft func(guildID, userID uint64)
	// Search builds guilds' search indexes (rule GLD-3); nil leaves unindexed guilds so.
	Search SearchIndexer
	// OnTargetUsersJob, when set, is called on the goroutine of the target-users jobs (StartJobs)
	// when it takes up an invite's job (status wire.TargetUsersJobProcessing) and when the job
	// has ended (its final status; a job a later upload replaced gets no second call). The job
	// waits while it runs: a test holds a job in progress this way. ctx is done once Close has
	// been called: a hook that waits must stop waiting then.
	OnTargetUsersJob func(ctx context.Context, code string, status int)
	// PublicURL is the web base the URLs of attachments start with (RegisterAttachments serves
	// them), e.g. http://127.0.0.1:7710.
	PublicURL string

	jobs jobRunner // the target-users jobs (targetjobs.go)
	slow slowmode  // when members last sent in each channel (slowmode.go)
}

// Register adds the routes to mux (paths relative to the API base).
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("GET /users/@me/guilds", s.callerRoute(s.userGuilds))
	mux.HandleFunc("GET /guilds/{guild_id}/channels", s.callerRoute(s.channels))
	mux.HandleFunc("GET /invites/{code}", s.getInvite)
	mux.HandleFunc("POST /invites/{code}", s.route(scopes.GuildsJoin, s.acceptInvite))
}

// route authenticates a Bearer token carrying scope and writes the handler's answer.
func (s *Service) route(scope string, h func(r *http.Request, t *store.Token) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := func() (any, error) {
			t, err := token.Auth{Store: s.Store, Clock: s.Clock}.Bearer(r)
			if err != nil {
				return nil, err
			}
			if !scopes.Has(t.Scopes, scope) {
				return nil, wire.MissingAccess()
			}
			return h(r, t)
		}()
		if err != nil {
			httpx.Error(w, r, s.Logger, err)
			return
		}
		httpx.JSON(w, http.StatusOK, out)
	}
}

// pathID reads a snowflake path value; a malformed one is a 50035 naming it.
func pathID(r *http.Request, name string) (uint64, error) {
	id, ok := wire.ParseSnowflake(r.PathValue(name))
	if !ok {
		return 0, wire.InvalidAt(name, "NUMBER_TYPE_COERCE", "The value is not snowflake.")
	}
	return uint64(id), nil
}

// Permissions returns the user's guild-wide permission bits (Access.Base); ok is false for a
// non-member.
func Permissions(ctx context.Context, st store.Store, g *store.Guild, userID uint64) (perms uint64, ok bool, err error) {
	a, err := LoadAccess(ctx, st, g, userID)
	if err != nil {
		return 0, false, err
	}
	if a.Member == nil {
		if g.OwnerID == userID {
			return permAll, true, nil
		}
		return 0, false, nil
	}
	return a.Base(), true, nil
}

// MayLink tells whether the user may link the channel to a lobby: a text channel of a guild the
// user owns or manages channels of.
func MayLink(ctx context.Context, st store.Store, userID uint64, ch *store.GuildChannel) (bool, error) {
	if ch.Type != wire.ChannelGuildText {
		return false, nil
	}
	g, err := st.GetGuild(ctx, ch.GuildID)
	if err != nil {
		return false, err
	}
	perms, member, err := Permissions(ctx, st, g, userID)
	return member && perms&PermManageChannels != 0, err
}

func partial(g *store.Guild, perms uint64, userID uint64) wire.PartialGuild {
	return wire.PartialGuild{ID: wire.Snowflake(g.ID), Name: g.Name, Owner: g.OwnerID == userID,
		Permissions: strconv.FormatUint(perms, 10), Features: []string{}}
}

// userGuilds serves GET /users/@me/guilds to a user or a bot; a bot may give ?shard= (rule
// GLD-1, see shardOf).
func (s *Service) userGuilds(q *caller) (any, error) {
	list, err := s.Store.ListUserGuilds(q.ctx, q.userID)
	if err != nil {
		return nil, err
	}
	if list, err = s.shardOf(q, list); err != nil {
		return nil, err
	}
	out := make([]wire.PartialGuild, 0, len(list))
	for i := range list {
		perms, _, err := Permissions(q.ctx, s.Store, &list[i], q.userID)
		if err != nil {
			return nil, err
		}
		out = append(out, partial(&list[i], perms, q.userID))
	}
	return out, nil
}

// channels serves GET /guilds/{guild_id}/channels to a member: the channels by position (GCH-1),
// from Nov 16, 2026 only those the member can view (GCL-1).
func (s *Service) channels(q *caller) (any, error) {
	id, err := pathID(q.Request, "guild_id")
	if err != nil {
		return nil, err
	}
	ctx := q.ctx
	g, err := s.Store.GetGuild(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownGuild()
	}
	if err != nil {
		return nil, err
	}
	perms, member, err := Permissions(ctx, s.Store, g, q.userID)
	if err != nil {
		return nil, err
	}
	if !member {
		return nil, wire.MissingAccess()
	}
	list, err := s.Store.ListGuildChannels(ctx, g.ID)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	list, err = VisibleChannels(list, now, func(c *store.GuildChannel) (uint64, error) { // rule GCL-1
		return ChannelPermissions(ctx, s.Store, g, c, q.userID)
	})
	if err != nil {
		return nil, err
	}
	out := make([]wire.GuildChannel, 0, len(list))
	for i := range list {
		c := &list[i]
		ch := ChannelObject(c)
		ch.IsLinkable = c.Type == wire.ChannelGuildText && perms&PermManageChannels != 0
		if ch.LinkedLobby, err = LinkedLobby(ctx, s.Store, c.ID, now); err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// ChannelObject is the wire form of a channel, without the caller-specific fields.
func ChannelObject(c *store.GuildChannel) wire.GuildChannel {
	out := wire.GuildChannel{ID: wire.Snowflake(c.ID), Type: c.Type, GuildID: wire.Snowflake(c.GuildID), Name: c.Name,
		Position: c.Position, IsViewableAndWriteableByAllMembers: true}
	if c.ParentID != 0 {
		p := wire.Snowflake(c.ParentID)
		out.ParentID = &p
	}
	return out
}

// LinkedLobby returns the live lobby linked to the channel, or nil.
func LinkedLobby(ctx context.Context, st store.Store, channelID uint64, now time.Time) (*wire.LinkedLobby, error) {
	link, err := st.GetChannelLink(ctx, channelID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l, err := st.GetLobby(ctx, link.LobbyID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !now.Before(l.ExpiresAt)) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &wire.LinkedLobby{ApplicationID: wire.Snowflake(l.AppID), LobbyID: wire.Snowflake(l.ID)}, nil
}

// usable loads an invite that still has a use left at now (404 10006 otherwise): max_uses 0 is
// unlimited, a zero expiry never comes.
func (s *Service) usable(ctx context.Context, st store.Store, code string, now time.Time) (*store.GuildInvite, error) {
	inv, err := st.GetGuildInvite(ctx, code)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ((inv.MaxUses > 0 && inv.Uses >= inv.MaxUses) ||
		(!inv.ExpiresAt.IsZero() && !now.Before(inv.ExpiresAt)))) {
		return nil, wire.UnknownInvite()
	}
	return inv, err
}

// Invite is a usable invite with what the service's invite page needs beyond its wire form.
type Invite struct {
	wire.Invite
	// Targeted: only the invite's target users may accept it (a lobby channel invite's member,
	// rule LOB-5; the target users of Create Channel Invite, rule INVT-1). Otherwise anyone
	// holding the code may.
	Targeted bool
	st       store.Store // the service's store, which For reads
}

// For tells whether userID may accept the invite. It reads the service's store: it is not for
// use inside one of the store's transactions.
func (i *Invite) For(ctx context.Context, userID uint64) (bool, error) {
	if !i.Targeted {
		return true, nil
	}
	return i.st.IsInviteTarget(ctx, i.Code, userID)
}

// inviteObject is the wire form of an invite, with its inviter.
func (s *Service) inviteObject(ctx context.Context, st store.Store, inv *store.GuildInvite) (*Invite, error) {
	g, err := st.GetGuild(ctx, inv.GuildID)
	if err != nil {
		return nil, err
	}
	ch, err := st.GetGuildChannel(ctx, inv.ChannelID)
	if err != nil {
		return nil, err
	}
	out := &Invite{Targeted: inv.Targeted, st: s.Store, Invite: wire.Invite{Code: inv.Code, Guild: partial(g, 0, 0),
		Channel: wire.InviteChannel{ID: wire.Snowflake(ch.ID), Name: ch.Name, Type: ch.Type},
		MaxAge:  maxAge(inv), MaxUses: inv.MaxUses, Uses: inv.Uses, Temporary: inv.Temporary,
		CreatedAt: inv.CreatedAt.UTC().Format(time.RFC3339)}}
	if !inv.ExpiresAt.IsZero() {
		exp := inv.ExpiresAt.UTC().Format(time.RFC3339)
		out.ExpiresAt = &exp
	}
	out.Guild.Permissions = "0"
	if out.Roles, err = inviteRoles(ctx, st, inv); err != nil {
		return nil, err
	}
	if inv.LobbyID != 0 {
		out.Lobby = &wire.InviteLobbyID{ID: wire.Snowflake(inv.LobbyID)}
	}
	inviter, err := st.GetUser(ctx, inv.InviterID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if inviter != nil {
		u := users.Object(inviter, false)
		out.Inviter = &u
	}
	return out, nil
}

// LookupInvite returns the invite of code while it has a use left: 404 10006 when it is
// unknown, used up or expired.
func (s *Service) LookupInvite(ctx context.Context, code string) (*Invite, error) {
	inv, err := s.usable(ctx, s.Store, code, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	return s.inviteObject(ctx, s.Store, inv)
}

// getInvite serves GET /invites/{code}.
func (s *Service) getInvite(w http.ResponseWriter, r *http.Request) {
	inv, err := s.LookupInvite(r.Context(), r.PathValue("code"))
	if err != nil {
		httpx.Error(w, r, s.Logger, err)
		return
	}
	httpx.JSON(w, http.StatusOK, inv.Invite)
}

// acceptInvite serves POST /invites/{code}.
func (s *Service) acceptInvite(r *http.Request, t *store.Token) (any, error) {
	inv, err := s.AcceptInvite(r.Context(), r.PathValue("code"), t.UserID)
	if err != nil {
		return nil, err
	}
	return inv.Invite, nil
}

// AcceptInvite makes userID join the invite's guild, using the invite once (a member already in
// the guild uses it too, as on the platform), and gives the user the invite's roles (rule
// INVT-1). It is the one way an invite is accepted: by the API (POST /invites/{code}) and by the
// service's invite page. Errors: 404 10006 for an unknown, used-up or expired code; 403 50001
// for a provisional account or a user the invite was not made for (not one of its target users:
// rules LOB-5, INVT-1). Nothing is stored on an error.
func (s *Service) AcceptInvite(ctx context.Context, code string, userID uint64) (*Invite, error) {
	var out *Invite
	var joined uint64  // the guild userID joined
	var updated uint64 // the guild where userID, a member already, got roles
	err := s.Store.WithTx(ctx, func(st store.Store) error {
		joined, updated = 0, 0
		now := s.Clock.Now()
		u, err := st.GetUser(ctx, userID)
		if err != nil {
			return err
		}
		if u.Provisional {
			return wire.MissingAccess()
		}
		inv, err := s.usable(ctx, st, code, now)
		if err != nil {
			return err
		}
		if out, err = s.inviteObject(ctx, st, inv); err != nil {
			return err
		}
		if inv.Targeted {
			if ok, err := st.IsInviteTarget(ctx, inv.Code, userID); err != nil {
				return err
			} else if !ok {
				return wire.MissingAccess()
			}
		}
		if err := st.UseGuildInvite(ctx, inv.Code, now); err != nil {
			return err
		}
		out.Uses++
		g, err := st.GetGuild(ctx, inv.GuildID)
		if err != nil {
			return err
		}
		_, member, err := Permissions(ctx, st, g, userID)
		if err != nil {
			return err
		}
		if !member {
			joined = g.ID
			if err := st.PutGuildMember(ctx, &store.GuildMember{GuildID: g.ID, UserID: userID, JoinedAt: now}); err != nil {
				return err
			}
		}
		if gave, err := giveInviteRoles(ctx, st, g.ID, userID, inv.RoleIDs); err != nil {
			return err
		} else if gave && member {
			updated = g.ID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if joined != 0 {
		s.MemberJoined(ctx, joined, userID)
	}
	if updated != 0 {
		s.memberUpdated(ctx, updated, userID)
	}
	return out, nil
}

// Create makes a guild owned by spec.OwnerID with its members and channels (dev seeding and
// POST /dev/guilds). Channels may name their category by index in spec (Parent) or by id
// (ParentID); a parent must be a category of the same guild.
func Create(ctx context.Context, st store.Store, ids *snowflake.Generator, now time.Time, spec wire.GuildSpec) (wire.DevGuild, error) {
	if err := checkName("name", spec.Name); err != nil {
		return wire.DevGuild{}, err
	}
	if len(spec.Channel) > MaxChannelsCreate {
		return wire.DevGuild{}, wire.InvalidAt("channels", "BASE_TYPE_MAX_LENGTH", "Must be 50 or fewer in length.")
	}
	out := wire.DevGuild{Name: spec.Name, OwnerID: spec.OwnerID, Channels: []wire.GuildChannel{}}
	err := st.WithTx(ctx, func(st store.Store) error {
		if err := checkUser(ctx, st, "owner_id", uint64(spec.OwnerID)); err != nil {
			return err
		}
		g := &store.Guild{ID: ids.Next(), Name: spec.Name, OwnerID: uint64(spec.OwnerID), CreatedAt: now}
		out.ID = wire.Snowflake(g.ID)
		if err := st.CreateGuild(ctx, g); err != nil {
			return err
		}
		roles, err := createRoles(ctx, st, ids, g, spec)
		if err != nil {
			return err
		}
		members := append([]wire.GuildMemberSpec{{ID: spec.OwnerID, ManageChannels: true}}, spec.Members...)
		for i, m := range members {
			at := "members." + strconv.Itoa(i-1)
			if i > 0 {
				if err := checkUser(ctx, st, at+".id", uint64(m.ID)); err != nil {
					return err
				}
			}
			if err := st.PutGuildMember(ctx, &store.GuildMember{GuildID: g.ID, UserID: uint64(m.ID), ManageChannels: m.ManageChannels, JoinedAt: now}); err != nil {
				return err
			}
			if err := setSpecRoles(ctx, st, g.ID, uint64(m.ID), roles, m.Roles, at); err != nil {
				return err
			}
		}
		made := make([]*store.GuildChannel, len(spec.Channel))
		for i, c := range spec.Channel {
			ch, err := newChannel(ctx, st, g.ID, c, made[:i], "channels."+strconv.Itoa(i))
			if err != nil {
				return err
			}
			ch.ID, ch.CreatedAt = ids.Next(), now
			if err := st.CreateGuildChannel(ctx, ch); err != nil {
				return err
			}
			if err := createOverwrites(ctx, st, g.ID, ch.ID, roles, c.Overwrites, "channels."+strconv.Itoa(i)); err != nil {
				return err
			}
			made[i] = ch
			out.Channels = append(out.Channels, ChannelObject(ch))
		}
		return nil
	})
	return out, err
}

// creatable are the channel types Create makes.
var creatable = map[int]bool{wire.ChannelGuildText: true, wire.ChannelGuildVoice: true, wire.ChannelGuildCategory: true,
	wire.ChannelGuildNews: true, wire.ChannelGuildStageVoice: true, wire.ChannelGuildForum: true, wire.ChannelGuildMedia: true}

// newChannel validates one channel of Create; before are the channels made earlier in the call.
func newChannel(ctx context.Context, st store.Store, guildID uint64, c wire.GuildChannelSpec, before []*store.GuildChannel, at string) (*store.GuildChannel, error) {
	if err := checkName(at+".name", c.Name); err != nil {
		return nil, err
	}
	if !creatable[c.Type] {
		return nil, wire.InvalidAt(at+".type", "BASE_TYPE_CHOICES", "Value must be one of {0, 2, 4, 5, 13, 15, 16}.")
	}
	ch := &store.GuildChannel{GuildID: guildID, Name: c.Name, Type: c.Type, Position: c.Position}
	var parent *store.GuildChannel
	switch {
	case c.Parent != nil && c.ParentID != nil:
		return nil, wire.InvalidAt(at+".parent", "CHANNEL_PARENT_INVALID", "Give parent or parent_id, not both.")
	case c.Parent != nil:
		if *c.Parent < 0 || *c.Parent >= len(before) {
			return nil, wire.InvalidAt(at+".parent", "CHANNEL_PARENT_INVALID", "Not an earlier channel of this request.")
		}
		parent = before[*c.Parent]
	case c.ParentID != nil:
		p, err := st.GetGuildChannel(ctx, uint64(*c.ParentID))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if p == nil || p.GuildID != guildID {
			return nil, wire.InvalidAt(at+".parent_id", "CHANNEL_PARENT_INVALID", "Unknown category.")
		}
		parent = p
	}
	if parent != nil {
		if parent.Type != wire.ChannelGuildCategory || c.Type == wire.ChannelGuildCategory {
			return nil, wire.InvalidAt(at+".parent", "CHANNEL_PARENT_INVALID", "The parent must be a category, of a channel that is not one.")
		}
		ch.ParentID = parent.ID
	}
	return ch, nil
}

func checkName(at, name string) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > MaxNameChars || !utf8.ValidString(name) {
		return wire.InvalidAt(at, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
	}
	return nil
}

// checkUser refuses an unknown user or a provisional account as a guild member (a bot user may
// be one).
func checkUser(ctx context.Context, st store.Store, at string, id uint64) error {
	u, err := st.GetUser(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.Provisional) {
		return wire.InvalidAt(at, "USER_UNKNOWN", "Unknown user.")
	}
	return err
}
