package lobbies

import (
	"context"
	"errors"
	"net/http"
	"time"

	"sdkpp/server/channels"
	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Lobby channel invites (rule LOB-5): single use, valid one hour.
const (
	InviteMaxUses  = 1
	InviteLifetime = time.Hour
	inviteCodeLen  = 10
)

// registerLinking adds the channel-linking and lobby channel invite routes.
func (s *Service) registerLinking(mux httpx.Router) {
	mux.HandleFunc("PATCH /lobbies/{lobby_id}/channel-linking", s.route(byUser, s.link))
	mux.HandleFunc("POST /lobbies/{lobby_id}/members/@me/invites", s.route(byUser, s.inviteSelf))
	mux.HandleFunc("POST /lobbies/{lobby_id}/members/{user_id}/invites", s.route(byBot, s.inviteUser))
}

// linkedChannel returns the lobby's linked channel, or nil.
func linkedChannel(ctx context.Context, st store.Store, lobbyID uint64) (*wire.LinkedChannel, error) {
	link, err := st.GetLobbyLink(ctx, lobbyID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ch, err := st.GetGuildChannel(ctx, link.ChannelID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &wire.LinkedChannel{ID: wire.Snowflake(ch.ID), Name: ch.Name, GuildID: wire.Snowflake(ch.GuildID)}, nil
}

// parseLinking reads the body of PATCH /lobbies/{id}/channel-linking: {channel_id?}; a channel id
// must be a snowflake string or number, null or absent unlinks.
func parseLinking(r *http.Request) (channelID uint64, err error) {
	var body map[string]any
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return 0, err
	}
	if body == nil {
		return 0, wire.InvalidAt("", "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	v, ok := body["channel_id"]
	if !ok || v == nil {
		return 0, nil
	}
	var raw string
	switch x := v.(type) {
	case string:
		raw = x
	case float64:
		if x != float64(uint64(x)) {
			return 0, wire.InvalidAt("channel_id", "NUMBER_TYPE_COERCE", "The value is not snowflake.")
		}
		raw = wire.Snowflake(uint64(x)).String()
	}
	id, ok := wire.ParseSnowflake(raw)
	if !ok {
		return 0, wire.InvalidAt("channel_id", "NUMBER_TYPE_COERCE", "The value is not snowflake.")
	}
	return uint64(id), nil
}

// link serves PATCH /lobbies/{lobby_id}/channel-linking: a member with the CanLinkLobby flag
// links a text channel they may manage (guild owner or manage channels) to the lobby, replacing
// its link, or unlinks it with channel_id null. A channel linked to another live lobby is
// refused. The members get LOBBY_UPDATE when the link changes; the answer is the lobby.
func (s *Service) link(q *request) (any, error) {
	channelID, err := parseLinking(q.Request)
	if err != nil {
		return nil, err
	}
	return s.editLobby(q, func(ch *change) error {
		me, ok := ch.before[q.userID]
		if !ok {
			return wire.MissingAccess()
		}
		if me.Flags&wire.LobbyMemberCanLinkLobby == 0 {
			return wire.MissingPermissions()
		}
		old, err := ch.st.GetLobbyLink(q.ctx, ch.lobby.ID)
		if errors.Is(err, store.ErrNotFound) {
			old = nil
		} else if err != nil {
			return err
		}
		if channelID == 0 {
			if old != nil {
				ch.updated = true
				return ch.st.DeleteLobbyLink(q.ctx, ch.lobby.ID)
			}
			return nil
		}
		c, err := ch.st.GetGuildChannel(q.ctx, channelID)
		if errors.Is(err, store.ErrNotFound) {
			return wire.UnknownChannel()
		}
		if err != nil {
			return err
		}
		if _, member, err := guildMember(q.ctx, ch.st, c.GuildID, q.userID); err != nil {
			return err
		} else if !member {
			return wire.UnknownChannel() // a guild the caller is not in is not shown to them
		}
		if c.Type != wire.ChannelGuildText {
			return wire.InvalidAt("channel_id", "CHANNEL_TYPE_INVALID", "Only text channels can be linked to a lobby.")
		}
		if may, err := channels.MayLink(q.ctx, ch.st, q.userID, c); err != nil {
			return err
		} else if !may {
			return wire.MissingPermissions()
		}
		if old != nil && old.ChannelID == c.ID {
			return nil
		}
		if other, err := ch.st.GetChannelLink(q.ctx, c.ID); err == nil {
			if ll, err := channels.LinkedLobby(q.ctx, ch.st, c.ID, ch.now); err != nil {
				return err
			} else if ll != nil {
				return wire.InvalidAt("channel_id", "CHANNEL_ALREADY_LINKED", "The channel is linked to another lobby.")
			}
			if err := ch.st.DeleteLobbyLink(q.ctx, other.LobbyID); err != nil { // its lobby expired
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		ch.updated = true
		return ch.st.PutLobbyLink(q.ctx, &store.LobbyLink{LobbyID: ch.lobby.ID, ChannelID: c.ID, AppID: ch.lobby.AppID,
			LinkedBy: q.userID, LinkedAt: ch.now})
	})
}

// guildMember loads the guild and tells whether userID is in it.
func guildMember(ctx context.Context, st store.Store, guildID, userID uint64) (*store.Guild, bool, error) {
	g, err := st.GetGuild(ctx, guildID)
	if err != nil {
		return nil, false, err
	}
	_, member, err := guildaccess.Permissions(ctx, st, g, userID)
	return g, member, err
}

// inviteSelf serves POST /lobbies/{lobby_id}/members/@me/invites (rule LOB-5): a member gets a
// single-use invite, valid one hour, to the lobby's linked channel. Provisional accounts cannot
// join guilds: 403 50001.
func (s *Service) inviteSelf(q *request) (any, error) {
	return s.invite(q, q.userID, true)
}

// inviteUser serves POST /lobbies/{lobby_id}/members/{user_id}/invites (rule LOB-5): the
// application's backend gets such an invite for a member.
func (s *Service) inviteUser(q *request) (any, error) {
	uid, err := q.id("user_id")
	if err != nil {
		return nil, err
	}
	return s.invite(q, uid, false)
}

// invite makes a lobby channel invite for member userID of the request's lobby, bound to that
// member: only they may accept it.
func (s *Service) invite(q *request, userID uint64, self bool) (any, error) {
	var out wire.InviteCode
	err := s.inLobby(q, func(st store.Store, _ *outbox, l *store.Lobby, now time.Time) error {
		if _, err := st.GetLobbyMember(q.ctx, l.ID, userID); errors.Is(err, store.ErrNotFound) {
			if self {
				return wire.MissingAccess()
			}
			return wire.UnknownMember()
		} else if err != nil {
			return err
		}
		u, err := st.GetUser(q.ctx, userID)
		if err != nil {
			return err
		}
		if u.Provisional {
			return wire.MissingAccess()
		}
		link, err := st.GetLobbyLink(q.ctx, l.ID)
		if errors.Is(err, store.ErrNotFound) {
			return wire.UnknownChannel() // no linked channel
		}
		if err != nil {
			return err
		}
		c, err := st.GetGuildChannel(q.ctx, link.ChannelID)
		if errors.Is(err, store.ErrNotFound) {
			return wire.UnknownChannel()
		}
		if err != nil {
			return err
		}
		for range 5 {
			inv := &store.GuildInvite{Code: secret.Random(inviteCodeLen)[:inviteCodeLen], GuildID: c.GuildID, ChannelID: c.ID,
				InviterID: userID, TargetUserIDs: []uint64{userID}, LobbyID: l.ID, MaxUses: InviteMaxUses, ExpiresAt: now.Add(InviteLifetime), CreatedAt: now}
			err := st.InsertGuildInvite(q.ctx, inv)
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			out.Code = inv.Code
			return err
		}
		return errors.New("lobbies: no free invite code")
	})
	return out, err
}

// MemberConnection tells the members of every live lobby of the application that userID is in
// that the user's connected flag may have changed: each gets LOBBY_MEMBER_UPDATE with the member
// as it is now. The service calls it when the user's first gateway session of the application
// starts and when the last one ends.
func (s *Service) MemberConnection(ctx context.Context, appID, userID uint64) error {
	return s.eachUserLobby(ctx, appID, userID, func(st store.Store, out *outbox, l *store.Lobby, _ time.Time) error {
		members, err := st.ListLobbyMembers(ctx, l.ID)
		if err != nil {
			return err
		}
		for _, m := range members {
			if m.UserID == userID {
				mo, err := s.memberObject(ctx, st, l.AppID, m)
				if err != nil {
					return err
				}
				out.add(l.AppID, memberIDs(members), gwire.EventLobbyMemberUpdate,
					wire.LobbyMemberEvent{LobbyID: wire.Snowflake(l.ID), Member: mo})
			}
		}
		return nil
	})
}
