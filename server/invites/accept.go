package invites

import (
	"context"
	"errors"
	"net/http"
	"time"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/wire"
)

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
	out := &Invite{Targeted: inv.Targeted, st: s.Store, Invite: wire.Invite{Code: inv.Code, Guild: guildaccess.PartialGuild(g, 0, 0),
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
		_, member, err := guildaccess.Permissions(ctx, st, g, userID)
		if err != nil {
			return err
		}
		if !member {
			joined = g.ID
			if err := st.PutGuildMember(ctx, &store.GuildMember{GuildID: g.ID, UserID: userID, JoinedAt: now, Temporary: inv.Temporary}); err != nil {
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
		s.MemberUpdated(ctx, updated, userID)
	}
	return out, nil
}
