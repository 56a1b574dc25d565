// Package accounts makes the account state changes of the service, each in one transaction:
// authorizations and their revocation, provisional accounts, merge and unmerge, bans (rules AU-4,
// AU-5, AU-7, ST-1, ST-2). Every change that severs a user's link to an application queues the
// APPLICATION_DEAUTHORIZED webhook in the same transaction (rule WH-1).
package accounts

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/extauth"
	"sdkpp/server/scopes"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/users"
	"sdkpp/server/webhook"
	"sdkpp/wire"
)

// Service changes account state.
type Service struct {
	Store  store.Store
	Clock  clock.Clock
	IDs    *snowflake.Generator
	Logger *slog.Logger
	Kick   func() // wakes the webhook dispatcher after a commit
	// OnRevoked, when set, is told of every authorization a committed change revoked (revocation,
	// unmerge, ban), so that the user's live sessions of that application can end.
	OnRevoked func(Revoked)
	// ProfileTx, when set, commits each change (in place of a plain transaction on Store), told
	// of the users whose game profiles in an application it altered (an external identity
	// moved to or from them: merge, unmerge, ban), so that the players who see them are told
	// in the same transaction (users.ProfileTx).
	ProfileTx users.ProfileTx
}

// ProvisionalScopes are the scopes of a provisional account's tokens: what the social layer needs.
func ProvisionalScopes() []string {
	return scopes.Expand([]string{scopes.OpenID, scopes.SocialLayer})
}

// tx runs fn in a transaction (in a ProfileTx, when set: fn may then run more than once) and
// wakes the dispatcher afterwards.
func (s *Service) tx(ctx context.Context, fn func(store.Store) error) error {
	var revoked []Revoked
	run := func(st store.Store) (users.Changed, error) {
		t := &txStore{Store: st}
		if err := fn(t); err != nil {
			return nil, err
		}
		revoked = t.revoked
		return t.changed(), nil
	}
	var err error
	if s.ProfileTx != nil {
		err = s.ProfileTx(ctx, nil, run)
	} else {
		err = s.Store.WithTx(ctx, func(st store.Store) error {
			_, err := run(st)
			return err
		})
	}
	if err != nil {
		return err
	}
	if s.Kick != nil {
		s.Kick()
	}
	if s.OnRevoked != nil {
		for _, r := range revoked {
			s.OnRevoked(r)
		}
	}
	return nil
}

// Revoked names an authorization that a committed change revoked.
type Revoked struct{ AppID, UserID uint64 }

// txStore is the store inside one of the Service's transactions; it collects the revocations
// and the users whose identities moved, reported to OnRevoked once the
// transaction commits and to ProfileTx.
type txStore struct {
	store.Store
	revoked  []Revoked
	profiles users.Changed
	created  []uint64 // users created in the transaction
}

// CreateUser creates u and notes it as created in the transaction.
func (t *txStore) CreateUser(ctx context.Context, u *store.User) error {
	if err := t.Store.CreateUser(ctx, u); err != nil {
		return err
	}
	t.created = append(t.created, u.ID)
	return nil
}

// changed is the users whose game profiles the transaction altered, but for those it created:
// nobody could see them before, and their key need not be held (users.ProfileTx).
func (t *txStore) changed() users.Changed {
	out := users.Changed{}
	for app, ids := range t.profiles {
		for _, id := range ids {
			if !slices.Contains(t.created, id) {
				out.Note(app, id)
			}
		}
	}
	return out
}

// PutIdentity writes i and notes the users whose profiles it changes: its user, and the user it
// belonged to before.
func (t *txStore) PutIdentity(ctx context.Context, i *store.Identity) error {
	old, err := t.Store.GetIdentity(ctx, i.AppID, i.Type, i.ExternalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		old = nil
	case err != nil:
		return err
	}
	if err := t.Store.PutIdentity(ctx, i); err != nil {
		return err
	}
	if old != nil && old.UserID == i.UserID {
		return nil
	}
	if old != nil {
		t.noteProfiles(i.AppID, old.UserID)
	}
	t.noteProfiles(i.AppID, i.UserID)
	return nil
}

func (t *txStore) noteProfiles(appID, userID uint64) {
	if t.profiles == nil {
		t.profiles = users.Changed{}
	}
	t.profiles.Note(appID, userID)
}

// Authorize records (or updates) the top-level authorization of user for app.
func (s *Service) Authorize(ctx context.Context, st store.Store, appID, userID uint64, granted []string, integrationType int) (*store.Authorization, error) {
	a := &store.Authorization{ID: s.IDs.Next(), AppID: appID, UserID: userID, Scopes: granted,
		IntegrationType: integrationType, CreatedAt: s.Clock.Now()}
	if err := st.PutAuthorization(ctx, a); err != nil {
		return nil, err
	}
	return a, nil
}

// AuthorizeChild records a child authorization of childApp under parent (rule AU-4).
func (s *Service) AuthorizeChild(ctx context.Context, parent *store.Authorization, childApp uint64) (*store.Authorization, error) {
	a := &store.Authorization{ID: s.IDs.Next(), AppID: childApp, UserID: parent.UserID, Scopes: parent.Scopes,
		IntegrationType: parent.IntegrationType, ParentID: parent.ID, CreatedAt: s.Clock.Now()}
	return a, s.Store.PutAuthorization(ctx, a)
}

// Revoke deletes the authorization with every token under it and every child authorization, and
// queues APPLICATION_DEAUTHORIZED for each (rules AU-7, ST-2, WH-1). Each of also runs in the
// same transaction (an operator's audit entry, say).
func (s *Service) Revoke(ctx context.Context, authID uint64, also ...func(store.Store) error) error {
	return s.tx(ctx, func(st store.Store) error {
		a, err := st.GetAuthorization(ctx, authID)
		if errors.Is(err, store.ErrNotFound) {
			return runAll(st, also)
		}
		if err != nil {
			return err
		}
		if err := s.revoke(ctx, st, a, true); err != nil {
			return err
		}
		return runAll(st, also)
	})
}

// runAll runs each of fns on st, stopping at the first error.
func runAll(st store.Store, fns []func(store.Store) error) error {
	for _, fn := range fns {
		if err := fn(st); err != nil {
			return err
		}
	}
	return nil
}

// revoke deletes a and its children; notify queues the webhook for each.
func (s *Service) revoke(ctx context.Context, st store.Store, a *store.Authorization, notify bool) error {
	children, err := st.ListChildAuthorizations(ctx, a.ID)
	if err != nil {
		return err
	}
	for i := range children {
		if err := s.revoke(ctx, st, &children[i], notify); err != nil {
			return err
		}
	}
	if err := st.DeleteAuthorization(ctx, a.ID); err != nil {
		return err
	}
	s.Logger.InfoContext(ctx, "authorization revoked", "application_id", a.AppID, "user_id", a.UserID, "authorization_id", a.ID)
	if t, ok := st.(*txStore); ok {
		t.revoked = append(t.revoked, Revoked{AppID: a.AppID, UserID: a.UserID})
	}
	if !notify {
		return nil
	}
	return s.notifyDeauthorized(ctx, st, a.AppID, a.UserID)
}

// notifyDeauthorized queues APPLICATION_DEAUTHORIZED with the user (rule WH-1).
func (s *Service) notifyDeauthorized(ctx context.Context, st store.Store, appID, userID uint64) error {
	app, err := st.GetApplication(ctx, appID)
	if err != nil {
		return err
	}
	u, err := st.GetUser(ctx, userID)
	if err != nil {
		return err
	}
	return webhook.Enqueue(ctx, st, s.IDs, s.Clock.Now(), app, wire.EventApplicationDeauthorized,
		wire.DeauthorizedData{User: users.Object(u, false)})
}

// revokeUserApp revokes user's top-level authorization of app; with notify the webhook is queued
// even when there was no authorization (an unmerge is always observable).
func (s *Service) revokeUserApp(ctx context.Context, st store.Store, appID, userID uint64, notify bool) error {
	a, err := st.FindAuthorization(ctx, appID, userID)
	if errors.Is(err, store.ErrNotFound) {
		if notify {
			return s.notifyDeauthorized(ctx, st, appID, userID)
		}
		return nil
	}
	if err != nil {
		return err
	}
	return s.revoke(ctx, st, a, notify)
}

// newProvisional creates a provisional account of app.
func (s *Service) newProvisional(ctx context.Context, st store.Store, appID uint64, name string, restrictedBy uint64) (*store.User, error) {
	id := s.IDs.Next()
	if name == "" {
		name = "Player " + strconv.FormatUint(id%10000, 10)
	}
	u := &store.User{ID: id, Username: "provisional_" + strconv.FormatUint(id, 10), GlobalName: name,
		Provisional: true, ProvisionalAppID: appID, RestrictedBy: restrictedBy, CreatedAt: s.Clock.Now()}
	return u, st.CreateUser(ctx, u)
}

// ForIdentity returns the user the external identity belongs to, creating a provisional account for
// it on first sight (rule AU-5). When the identity was merged, that is the full account.
func (s *Service) ForIdentity(ctx context.Context, app *store.Application, id extauth.Identity, preferredName string) (*store.User, error) {
	var u *store.User
	err := s.tx(ctx, func(st store.Store) error {
		ident, err := st.GetIdentity(ctx, app.ID, id.Type, id.ExternalID)
		if err == nil {
			u, err = st.GetUser(ctx, ident.UserID)
			return err
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		u, err = s.newProvisional(ctx, st, app.ID, preferredName, 0)
		if err != nil {
			return err
		}
		s.Logger.InfoContext(ctx, "provisional account created", "application_id", app.ID, "user_id", u.ID, "type", id.Type)
		return st.PutIdentity(ctx, &store.Identity{AppID: app.ID, Type: id.Type, ExternalID: id.ExternalID,
			UserID: u.ID, ProvisionalUserID: u.ID, CreatedAt: s.Clock.Now()})
	})
	return u, err
}

func apiErr(code int, msg string) *wire.APIError {
	return &wire.APIError{Status: http.StatusBadRequest, Code: code, Message: msg}
}

// Merge links the external identity into the full account dest: the provisional account holding it
// hands every identity it has for app to dest and its tokens die (the normal token call plus
// external_auth_type and external_auth_token). Errors: 530016 when dest is not a full account or
// already has another identity of that type; 530010 when the identity belongs to another full
// account; 530017 while the identity is held by the restricted account of a ban that lasts (rule
// ST-1).
func (s *Service) Merge(ctx context.Context, app *store.Application, destID uint64, id extauth.Identity) error {
	return s.tx(ctx, func(st store.Store) error {
		dest, err := st.GetUser(ctx, destID)
		if err != nil {
			return err
		}
		now := s.Clock.Now()
		if dest.Provisional || dest.Bot {
			return apiErr(wire.CodeInvalidMergeDestination, "Invalid merge destination: not a full account")
		}
		if dest.Banned(now) {
			return apiErr(wire.CodeMergeSourceBanned, "Cannot merge: the account is banned")
		}
		ident, err := st.GetIdentity(ctx, app.ID, id.Type, id.ExternalID)
		if errors.Is(err, store.ErrNotFound) {
			if err := s.checkDestFree(ctx, st, app.ID, dest.ID, id.Type); err != nil {
				return err
			}
			return st.PutIdentity(ctx, &store.Identity{AppID: app.ID, Type: id.Type, ExternalID: id.ExternalID,
				UserID: dest.ID, CreatedAt: now})
		}
		if err != nil {
			return err
		}
		if ident.UserID == dest.ID {
			return nil
		}
		src, err := st.GetUser(ctx, ident.UserID)
		if err != nil {
			return err
		}
		if src.RestrictedBy != 0 {
			banned, err := st.GetUser(ctx, src.RestrictedBy)
			if err != nil {
				return err
			}
			if banned.Banned(now) {
				return apiErr(wire.CodeMergeSourceBanned, "Cannot merge: the account is banned") // rule ST-1
			}
		}
		if !src.Provisional {
			return apiErr(wire.CodeNotProvisional, "Cannot merge: the source is not a provisional account")
		}
		if err := s.checkDestFree(ctx, st, app.ID, dest.ID, id.Type); err != nil {
			return err
		}
		idents, err := st.ListIdentitiesByUser(ctx, src.ID)
		if err != nil {
			return err
		}
		for _, i := range idents {
			if i.AppID != app.ID {
				continue
			}
			i.UserID, i.ProvisionalUserID = dest.ID, src.ID
			if err := st.PutIdentity(ctx, &i); err != nil {
				return err
			}
		}
		s.Logger.InfoContext(ctx, "provisional account merged", "application_id", app.ID, "from_user_id", src.ID, "into_user_id", dest.ID)
		return s.revokeUserApp(ctx, st, app.ID, src.ID, false)
	})
}

func (s *Service) checkDestFree(ctx context.Context, st store.Store, appID, destID uint64, typ string) error {
	idents, err := st.ListIdentitiesByUser(ctx, destID)
	if err != nil {
		return err
	}
	for _, i := range idents {
		if i.AppID == appID && i.Type == typ {
			return apiErr(wire.CodeInvalidMergeDestination, "Invalid merge destination: already linked to another "+typ+" identity")
		}
	}
	return nil
}

// Unmerge splits the identity off the full account it was merged into: the provisional account it
// came from gets it back (a new one is made when there was none), the full account's authorization
// of app is revoked and APPLICATION_DEAUTHORIZED is queued with the full account (rules ST-2,
// WH-1). An identity that is not merged gives 530014.
func (s *Service) Unmerge(ctx context.Context, app *store.Application, id extauth.Identity) (*store.User, error) {
	var prov *store.User
	err := s.tx(ctx, func(st store.Store) error {
		prov = nil // of this run (ProfileTx may run it again)
		ident, err := st.GetIdentity(ctx, app.ID, id.Type, id.ExternalID)
		if errors.Is(err, store.ErrNotFound) {
			return apiErr(wire.CodeInvalidMergeSource, "Invalid merge source: the identity is not linked")
		}
		if err != nil {
			return err
		}
		full, err := st.GetUser(ctx, ident.UserID)
		if err != nil {
			return err
		}
		if full.Provisional {
			return apiErr(wire.CodeInvalidMergeSource, "Invalid merge source: the identity is not merged into a full account")
		}
		if ident.ProvisionalUserID != 0 {
			prov, err = st.GetUser(ctx, ident.ProvisionalUserID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if prov == nil {
			if prov, err = s.newProvisional(ctx, st, app.ID, full.GlobalName, 0); err != nil {
				return err
			}
			ident.ProvisionalUserID = prov.ID
		}
		idents, err := st.ListIdentitiesByUser(ctx, full.ID)
		if err != nil {
			return err
		}
		for _, i := range idents {
			if i.AppID == app.ID && (i.ProvisionalUserID == prov.ID || (i.Type == ident.Type && i.ExternalID == ident.ExternalID)) {
				i.UserID, i.ProvisionalUserID = prov.ID, prov.ID
				if err := st.PutIdentity(ctx, &i); err != nil {
					return err
				}
			}
		}
		s.Logger.InfoContext(ctx, "account unmerged", "application_id", app.ID, "full_user_id", full.ID, "provisional_user_id", prov.ID)
		return s.revokeUserApp(ctx, st, app.ID, full.ID, true)
	})
	return prov, err
}

// Ban bans the user until the given time (zero: permanently) (rule ST-1): every link to a game
// account is severed, each identity moving to a new cross-platform-restricted provisional account;
// every token is deleted at once and APPLICATION_DEAUTHORIZED is queued for each app (rule WH-1);
// the user's consent-page sessions end. Each of also runs in the same transaction.
func (s *Service) Ban(ctx context.Context, userID uint64, until time.Time, also ...func(store.Store) error) error {
	return s.tx(ctx, func(st store.Store) error {
		u, err := st.GetUser(ctx, userID)
		if err != nil {
			return err
		}
		if u.Bot {
			return errors.New("accounts: a bot user cannot be banned")
		}
		u.BanPermanent, u.BannedUntil = until.IsZero(), until
		if err := st.UpdateUser(ctx, u); err != nil {
			return err
		}
		idents, err := st.ListIdentitiesByUser(ctx, u.ID)
		if err != nil {
			return err
		}
		restricted := map[uint64]*store.User{}
		for _, i := range idents {
			r := restricted[i.AppID]
			if r == nil {
				name := u.GlobalName
				if name == "" {
					name = u.Username
				}
				if r, err = s.newProvisional(ctx, st, i.AppID, name, u.ID); err != nil {
					return err
				}
				restricted[i.AppID] = r
			}
			i.UserID, i.ProvisionalUserID = r.ID, r.ID
			if err := st.PutIdentity(ctx, &i); err != nil {
				return err
			}
		}
		auths, err := st.ListAuthorizationsByUser(ctx, u.ID)
		if err != nil {
			return err
		}
		for i := range auths {
			if auths[i].ParentID != 0 {
				continue // revoked with its parent
			}
			if err := s.revoke(ctx, st, &auths[i], true); err != nil {
				return err
			}
		}
		// Children whose parent is gone already (none normally) are revoked too.
		rest, err := st.ListAuthorizationsByUser(ctx, u.ID)
		if err != nil {
			return err
		}
		for i := range rest {
			if err := s.revoke(ctx, st, &rest[i], true); err != nil {
				return err
			}
		}
		s.Logger.InfoContext(ctx, "user banned", "user_id", u.ID, "permanent", u.BanPermanent, "until", until, "restricted_accounts", len(restricted))
		if err := st.DeleteSessionsOfUser(ctx, u.ID); err != nil {
			return err
		}
		return runAll(st, also)
	})
}

// Unban lifts a ban; merges from the restricted accounts it created work again. Each of also
// runs in the same transaction.
func (s *Service) Unban(ctx context.Context, userID uint64, also ...func(store.Store) error) error {
	return s.tx(ctx, func(st store.Store) error {
		u, err := st.GetUser(ctx, userID)
		if err != nil {
			return err
		}
		u.BanPermanent, u.BannedUntil = false, time.Time{}
		s.Logger.InfoContext(ctx, "user unbanned", "user_id", u.ID)
		if err := st.UpdateUser(ctx, u); err != nil {
			return err
		}
		return runAll(st, also)
	})
}
