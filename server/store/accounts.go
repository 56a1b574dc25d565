package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ---- applications

const appColumns = `id, name, publisher_id, parent_id, public_client, premium_approved, redirect_uris,
	webhook_url, client_secret_hash, bot_token_hash, bot_user_id, webhook_key, created_at, sdk_terms_accepted,
	flags, channel_obfuscation`

func scanApp(row interface{ Scan(...any) error }) (*Application, error) {
	var a Application
	var uris string
	var created int64
	var public, premium, terms, obfuscation int
	var flags int64
	err := row.Scan(&a.ID, &a.Name, &a.PublisherID, &a.ParentID, &public, &premium, &uris,
		&a.WebhookURL, &a.ClientSecretHash, &a.BotTokenHash, &a.BotUserID, &a.WebhookKey, &created, &terms,
		&flags, &obfuscation)
	if err != nil {
		return nil, notFound(err)
	}
	a.PublicClient, a.PremiumApproved, a.SDKTermsAccepted = public != 0, premium != 0, terms != 0
	a.Flags, a.ChannelObfuscation = uint64(flags), obfuscation != 0
	a.CreatedAt = fromTS(created)
	if uris == "[]" { // most applications: no decoding on every message send (webhook lookup)
		a.RedirectURIs = []string{}
	} else if err := json.Unmarshal([]byte(uris), &a.RedirectURIs); err != nil {
		return nil, fmt.Errorf("store: redirect_uris of app %d: %w", a.ID, err)
	}
	return &a, nil
}

func (s *DB) CreateApplication(ctx context.Context, a *Application) error {
	uris, _ := json.Marshal(nonNil(a.RedirectURIs))
	_, err := s.q.ExecContext(ctx, `INSERT INTO applications (`+appColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		a.ID, a.Name, a.PublisherID, a.ParentID, b2i(a.PublicClient), b2i(a.PremiumApproved), string(uris),
		a.WebhookURL, a.ClientSecretHash, a.BotTokenHash, a.BotUserID, a.WebhookKey, ts(a.CreatedAt),
		b2i(a.SDKTermsAccepted), int64(a.Flags&MaxApplicationFlags), b2i(a.ChannelObfuscation))
	if s.isUnique(err) {
		return ErrConflict
	}
	return err
}

func (s *DB) UpdateApplication(ctx context.Context, a *Application) error {
	defer s.changed()()
	uris, _ := json.Marshal(nonNil(a.RedirectURIs))
	return mustAffect(s.q.ExecContext(ctx, `UPDATE applications SET name=?, publisher_id=?, parent_id=?,
		public_client=?, premium_approved=?, redirect_uris=?, webhook_url=?, client_secret_hash=?,
		bot_token_hash=?, bot_user_id=?, webhook_key=?, sdk_terms_accepted=?, flags=?, channel_obfuscation=?
		WHERE id=?`,
		a.Name, a.PublisherID, a.ParentID, b2i(a.PublicClient), b2i(a.PremiumApproved), string(uris),
		a.WebhookURL, a.ClientSecretHash, a.BotTokenHash, a.BotUserID, a.WebhookKey, b2i(a.SDKTermsAccepted),
		int64(a.Flags&MaxApplicationFlags), b2i(a.ChannelObfuscation), a.ID))
}

// GetApplication reads application id. Outside a transaction on SQLite the memo answers for the
// applications read since the last write that could change one (UpdateApplication): the token
// endpoint and every message a bot or webhook sends read their application.
func (s *DB) GetApplication(ctx context.Context, id uint64) (*Application, error) {
	return memoRead(ctx, s, &s.memo.apps, id, func() (*Application, error) { return s.readApplication(ctx, id) })
}

func (s *DB) readApplication(ctx context.Context, id uint64) (*Application, error) {
	return scanApp(s.q.QueryRowContext(ctx, `SELECT `+appColumns+` FROM applications WHERE id=?`, id))
}

// appBytes is the room that clone gives an application's byte slices beside the copy itself:
// two SHA-256 hashes and an Ed25519 seed.
const appBytes = 3 * 32

// clonedApp is an application's copy and the array its byte slices share, allocated together.
type clonedApp struct {
	app Application
	buf [appBytes]byte
}

// clone returns a copy of a that shares no slice with it. Its byte slices share one array of
// their own, allocated with the copy when they fit in appBytes (the token endpoint clones the
// client's application at every request).
func (a *Application) clone() *Application {
	n := len(a.ClientSecretHash) + len(a.BotTokenHash) + len(a.WebhookKey)
	var c *Application
	var buf []byte
	if n <= appBytes {
		ca := &clonedApp{app: *a}
		c, buf = &ca.app, ca.buf[:0]
	} else {
		c, buf = new(Application), make([]byte, 0, n)
		*c = *a
	}
	c.RedirectURIs = slices.Clone(a.RedirectURIs)
	buf, c.ClientSecretHash = cloneInto(buf, a.ClientSecretHash)
	buf, c.BotTokenHash = cloneInto(buf, a.BotTokenHash)
	_, c.WebhookKey = cloneInto(buf, a.WebhookKey)
	return c
}

// cloneInto appends b to buf, which has room for it, and returns buf and the copy: nil for a nil
// b, as slices.Clone gives, and a slice whose appends cannot reach what buf holds after it.
func cloneInto(buf, b []byte) ([]byte, []byte) {
	if b == nil {
		return buf, nil
	}
	n := len(buf)
	buf = append(buf, b...)
	return buf, buf[n:len(buf):len(buf)]
}

func (s *DB) GetApplicationByBotToken(ctx context.Context, hash []byte) (*Application, error) {
	return scanApp(s.q.QueryRowContext(ctx, `SELECT `+appColumns+` FROM applications WHERE bot_token_hash=?`, hash))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ---- users

// userInsertColumns are the columns CreateUser writes; userColumns, which scanUser reads, add the
// user's primary guild (usersapps.go), which only SetPrimaryGuild and PutGuildTag write.
const (
	userInsertColumns = `id, username, global_name, password_hash, bot, provisional, provisional_app_id,
	premium_type, ban_permanent, banned_until, restricted_by, created_at`
	userColumns = userInsertColumns + `, ` + primaryGuildColumns
)

func scanUser(row interface{ Scan(...any) error }) (*User, error) {
	var u User
	var bot, prov, perm int
	var until, created int64
	var pg primaryGuildRow
	err := row.Scan(&u.ID, &u.Username, &u.GlobalName, &u.PasswordHash, &bot, &prov, &u.ProvisionalAppID,
		&u.PremiumType, &perm, &until, &u.RestrictedBy, &created, &pg.guildID, &pg.enabled, &pg.tag, &pg.badge)
	if err != nil {
		return nil, notFound(err)
	}
	u.PrimaryGuild = pg.value()
	u.Bot, u.Provisional, u.BanPermanent = bot != 0, prov != 0, perm != 0
	u.BannedUntil, u.CreatedAt = fromTS(until), fromTS(created)
	return &u, nil
}

func (s *DB) CreateUser(ctx context.Context, u *User) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO users (`+userInsertColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		u.ID, u.Username, u.GlobalName, u.PasswordHash, b2i(u.Bot), b2i(u.Provisional), u.ProvisionalAppID,
		u.PremiumType, b2i(u.BanPermanent), ts(u.BannedUntil), u.RestrictedBy, ts(u.CreatedAt))
	if s.isUnique(err) {
		return ErrConflict
	}
	return err
}

func (s *DB) UpdateUser(ctx context.Context, u *User) error {
	defer s.changed()()
	res, err := s.q.ExecContext(ctx, `UPDATE users SET username=?, global_name=?, password_hash=?, bot=?,
		provisional=?, provisional_app_id=?, premium_type=?, ban_permanent=?, banned_until=?, restricted_by=?
		WHERE id=?`,
		u.Username, u.GlobalName, u.PasswordHash, b2i(u.Bot), b2i(u.Provisional), u.ProvisionalAppID,
		u.PremiumType, b2i(u.BanPermanent), ts(u.BannedUntil), u.RestrictedBy, u.ID)
	if s.isUnique(err) {
		return ErrConflict
	}
	return mustAffect(res, err)
}

func (s *DB) GetUser(ctx context.Context, id uint64) (*User, error) {
	return scanUser(s.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id=?`, id))
}

func (s *DB) GetUserByUsername(ctx context.Context, username string) (*User, error) {
	return scanUser(s.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE username=?`, username))
}

// ---- identities

const identityColumns = `app_id, type, external_id, user_id, provisional_user_id, created_at`

var upsertIdentity = upsert(`identities`, identityColumns, `app_id, type, external_id`)

func scanIdentity(row interface{ Scan(...any) error }) (*Identity, error) {
	var i Identity
	var created int64
	if err := row.Scan(&i.AppID, &i.Type, &i.ExternalID, &i.UserID, &i.ProvisionalUserID, &created); err != nil {
		return nil, notFound(err)
	}
	i.CreatedAt = fromTS(created)
	return &i, nil
}

func (s *DB) GetIdentity(ctx context.Context, appID uint64, typ, externalID string) (*Identity, error) {
	return scanIdentity(s.q.QueryRowContext(ctx, `SELECT `+identityColumns+` FROM identities
		WHERE app_id=? AND type=? AND external_id=?`, appID, typ, externalID))
}

func (s *DB) PutIdentity(ctx context.Context, i *Identity) error {
	_, err := s.q.ExecContext(ctx, upsertIdentity,
		i.AppID, i.Type, i.ExternalID, i.UserID, i.ProvisionalUserID, ts(i.CreatedAt))
	return err
}

func (s *DB) ListIdentitiesByUser(ctx context.Context, userID uint64) ([]Identity, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+identityColumns+` FROM identities WHERE user_id=?
		ORDER BY app_id, type, external_id`, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanIdentity)
}

// collect scans every row.
func collect[T any](rows *sql.Rows, scan func(interface{ Scan(...any) error }) (*T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// ---- authorizations

const authColumns = `id, app_id, user_id, scopes, integration_type, parent_id, created_at`

func scanAuth(row interface{ Scan(...any) error }) (*Authorization, error) {
	var a Authorization
	var scopes string
	var created int64
	if err := row.Scan(&a.ID, &a.AppID, &a.UserID, &scopes, &a.IntegrationType, &a.ParentID, &created); err != nil {
		return nil, notFound(err)
	}
	a.Scopes, a.CreatedAt = splitScopes(scopes), fromTS(created)
	return &a, nil
}

func (s *DB) PutAuthorization(ctx context.Context, a *Authorization) error {
	defer s.changed()() // FindAuthorization's memo
	if a.ParentID == 0 {
		// One statement, so that two first grants of the same user and application at once
		// (two token requests racing) make one authorization instead of a unique-index error.
		var created int64
		err := s.q.QueryRowContext(ctx, `INSERT INTO authorizations (`+authColumns+`) VALUES (?,?,?,?,?,?,?)
			ON CONFLICT(app_id, user_id) WHERE parent_id = 0
			DO UPDATE SET scopes=excluded.scopes, integration_type=excluded.integration_type
			RETURNING id, created_at`,
			a.ID, a.AppID, a.UserID, joinScopes(a.Scopes), a.IntegrationType, a.ParentID, ts(a.CreatedAt)).
			Scan(&a.ID, &created)
		if err != nil {
			return err
		}
		a.CreatedAt = fromTS(created)
		return nil
	}
	_, err := s.q.ExecContext(ctx, `INSERT INTO authorizations (`+authColumns+`) VALUES (?,?,?,?,?,?,?)`,
		a.ID, a.AppID, a.UserID, joinScopes(a.Scopes), a.IntegrationType, a.ParentID, ts(a.CreatedAt))
	return err
}

func (s *DB) GetAuthorization(ctx context.Context, id uint64) (*Authorization, error) {
	return scanAuth(s.q.QueryRowContext(ctx, `SELECT `+authColumns+` FROM authorizations WHERE id=?`, id))
}

// FindAuthorization reads the top-level authorization of userID for appID; on SQLite the memo
// answers for it until an authorization is written (client_credentials reads its bot's at every
// token).
func (s *DB) FindAuthorization(ctx context.Context, appID, userID uint64) (*Authorization, error) {
	return memoRead(ctx, s, &s.memo.auths, [2]uint64{appID, userID}, func() (*Authorization, error) {
		return s.findAuthorization(ctx, appID, userID)
	})
}

// authScopes is how many scopes clone keeps beside an authorization's copy.
const authScopes = 4

// clonedAuth is an authorization's copy and the array of its scopes, allocated together.
type clonedAuth struct {
	auth   Authorization
	scopes [authScopes]string
}

// clone returns a copy of a that shares no slice with it: one allocation when its scopes fit in
// authScopes (client_credentials reads its bot's authorization from the memo at every token).
func (a *Authorization) clone() *Authorization {
	if a.Scopes == nil || len(a.Scopes) > authScopes {
		c := *a
		c.Scopes = slices.Clone(a.Scopes)
		return &c
	}
	ca := &clonedAuth{auth: *a}
	n := copy(ca.scopes[:], a.Scopes)
	ca.auth.Scopes = ca.scopes[:n:n]
	return &ca.auth
}

func (s *DB) findAuthorization(ctx context.Context, appID, userID uint64) (*Authorization, error) {
	return scanAuth(s.q.QueryRowContext(ctx, `SELECT `+authColumns+` FROM authorizations
		WHERE app_id=? AND user_id=? AND parent_id=0`, appID, userID))
}

func (s *DB) ListAuthorizationsByUser(ctx context.Context, userID uint64) ([]Authorization, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+authColumns+` FROM authorizations WHERE user_id=? ORDER BY id`, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanAuth)
}

func (s *DB) ListChildAuthorizations(ctx context.Context, parentID uint64) ([]Authorization, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+authColumns+` FROM authorizations WHERE parent_id=? ORDER BY id`, parentID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanAuth)
}

func (s *DB) DeleteAuthorization(ctx context.Context, id uint64) error {
	defer s.changed()()
	return s.WithTx(ctx, func(st Store) error {
		q := st.(*DB).q
		if _, err := q.ExecContext(ctx, `DELETE FROM tokens WHERE authorization_id=?`, id); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, `DELETE FROM authorizations WHERE id=?`, id)
		return err
	})
}

// ---- tokens

const tokenColumns = `id, hash, legacy, kind, authorization_id, app_id, user_id, scopes, expires_at, created_at, grant_id, used_at`

// tokenPlaceholders are the placeholders of one row of tokenColumns.
const tokenPlaceholders = `(?,?,?,?,?,?,?,?,?,?,?,?)`

// InsertToken inserts t; outside a transaction, together with the tokens other callers insert
// at the same moment (newTokenWriter). New tokens' ids are snowflakes, which
// grow with time: each row goes to the end of the table's key, where the rows inserted just
// before it went, so that a commit of several tokens writes a page or two instead of one per
// token (as a random key, such as the hash, would).
func (s *DB) InsertToken(ctx context.Context, t *Token) error {
	if s.tokens != nil && !s.tx {
		return s.tokens.Write(ctx, t)
	}
	return s.insertToken(ctx, t)
}

// insertToken inserts t's row, its arguments in the drivers' own types (appendTokenArgs): a
// uint64 would be boxed, then converted and boxed again (a token alone in its group is
// inserted so).
func (s *DB) insertToken(ctx context.Context, t *Token) error {
	_, err := s.q.ExecContext(ctx, tokenInsert(1), appendTokenArgs(make([]any, 0, tokenArgCount), t, nil)...)
	return err
}

func (s *DB) GetToken(ctx context.Context, id uint64) (*Token, error) {
	t, err := memoRead(ctx, s, &s.memo.tokens, id, func() (Token, error) {
		t, err := s.readToken(ctx, `id=?`, id)
		if err != nil {
			return Token{}, err
		}
		return *t, nil
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// GetLegacyToken reads through the partial index of legacy tokens' hashes (the literal
// legacy=1 lets either database use it); such tokens are few and expiring, and not memoized.
func (s *DB) GetLegacyToken(ctx context.Context, hash []byte) (*Token, error) {
	return s.readToken(ctx, `hash=? AND legacy=1`, hash)
}

// readToken reads the token that where (a condition on one argument) selects.
func (s *DB) readToken(ctx context.Context, where string, arg any) (*Token, error) {
	var t Token
	var scopes string
	var legacy int
	var exp, created, used int64
	err := s.q.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE `+where, arg).
		Scan(&t.ID, &t.Hash, &legacy, &t.Kind, &t.AuthorizationID, &t.AppID, &t.UserID, &scopes, &exp, &created, &t.GrantID, &used)
	if err != nil {
		return nil, notFound(err)
	}
	t.Legacy = legacy != 0
	t.Scopes, t.ExpiresAt, t.CreatedAt, t.UsedAt = splitScopes(scopes), fromTS(exp), fromTS(created), fromTS(used)
	return &t, nil
}

func (s *DB) DeleteToken(ctx context.Context, id uint64) error {
	defer s.changed()()
	return mustAffect(s.q.ExecContext(ctx, `DELETE FROM tokens WHERE id=?`, id))
}

func (s *DB) UseToken(ctx context.Context, id uint64, at time.Time) error {
	defer s.changed()()
	return mustAffect(s.q.ExecContext(ctx, `UPDATE tokens SET used_at=? WHERE id=? AND used_at=0`, ts(at), id))
}

// ---- grants

func (s *DB) CreateGrant(ctx context.Context, g *Grant) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO token_grants (id, app_id, user_id, created_at, revoked_at) VALUES (?,?,?,?,?)`,
		g.ID, g.AppID, g.UserID, ts(g.CreatedAt), ts(g.RevokedAt))
	return err
}

func (s *DB) GetGrant(ctx context.Context, id uint64) (*Grant, error) {
	var g Grant
	var created, revoked int64
	err := s.q.QueryRowContext(ctx, `SELECT id, app_id, user_id, created_at, revoked_at FROM token_grants WHERE id=?`, id).
		Scan(&g.ID, &g.AppID, &g.UserID, &created, &revoked)
	if err != nil {
		return nil, notFound(err)
	}
	g.CreatedAt, g.RevokedAt = fromTS(created), fromTS(revoked)
	return &g, nil
}

func (s *DB) RevokeGrant(ctx context.Context, id uint64, at time.Time) (*Grant, error) {
	defer s.changed()()
	var g *Grant
	err := s.WithTx(ctx, func(st Store) error {
		q := st.(*DB).q
		if _, err := q.ExecContext(ctx, `UPDATE token_grants SET revoked_at=? WHERE id=? AND revoked_at=0`, ts(at), id); err != nil {
			return err
		}
		var err error
		if g, err = st.GetGrant(ctx, id); err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, `DELETE FROM tokens WHERE grant_id=?`, id)
		return err
	})
	return g, err
}

// ---- authorization codes

const codeColumns = `hash, app_id, user_id, redirect_uri, scopes, code_challenge, nonce, integration_type, expires_at, used, grant_id`

func (s *DB) InsertAuthCode(ctx context.Context, c *AuthCode) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO auth_codes (`+codeColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		c.Hash, c.AppID, c.UserID, c.RedirectURI, joinScopes(c.Scopes), c.CodeChallenge, c.Nonce,
		c.IntegrationType, ts(c.ExpiresAt), b2i(c.Used), c.GrantID)
	return err
}

func (s *DB) UseAuthCode(ctx context.Context, hash []byte, grant Grant) (*AuthCode, error) {
	var c AuthCode
	err := s.WithTx(ctx, func(st Store) error {
		q := st.(*DB).q
		var scopes string
		var exp int64
		var used int
		// The row lock makes a concurrent use on another connection (PostgreSQL) wait and then
		// read the code used.
		err := q.QueryRowContext(ctx, `SELECT `+codeColumns+` FROM auth_codes WHERE hash=? FOR UPDATE`, hash).
			Scan(&c.Hash, &c.AppID, &c.UserID, &c.RedirectURI, &scopes, &c.CodeChallenge, &c.Nonce,
				&c.IntegrationType, &exp, &used, &c.GrantID)
		if err != nil {
			return notFound(err)
		}
		c.Scopes, c.ExpiresAt, c.Used = splitScopes(scopes), fromTS(exp), used != 0
		if c.Used {
			return nil
		}
		grant.AppID, grant.UserID, grant.RevokedAt = c.AppID, c.UserID, time.Time{}
		if err := st.CreateGrant(ctx, &grant); err != nil {
			return err
		}
		c.GrantID = grant.ID
		_, err = q.ExecContext(ctx, `UPDATE auth_codes SET used=1, grant_id=? WHERE hash=?`, grant.ID, hash)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// ---- device codes

const deviceColumns = `hash, user_code, app_id, scopes, granted_scopes, status, user_id, interval_seconds,
	last_poll_at, expires_at, created_at`

func scanDevice(row interface{ Scan(...any) error }) (*DeviceCode, error) {
	var d DeviceCode
	var scopes, granted string
	var last, exp, created int64
	err := row.Scan(&d.Hash, &d.UserCode, &d.AppID, &scopes, &granted, &d.Status, &d.UserID, &d.Interval,
		&last, &exp, &created)
	if err != nil {
		return nil, notFound(err)
	}
	d.Scopes, d.GrantedScopes = splitScopes(scopes), splitScopes(granted)
	d.LastPollAt, d.ExpiresAt, d.CreatedAt = fromTS(last), fromTS(exp), fromTS(created)
	return &d, nil
}

func (s *DB) InsertDeviceCode(ctx context.Context, d *DeviceCode) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO device_codes (`+deviceColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		d.Hash, d.UserCode, d.AppID, joinScopes(d.Scopes), joinScopes(d.GrantedScopes), d.Status, d.UserID,
		d.Interval, ts(d.LastPollAt), ts(d.ExpiresAt), ts(d.CreatedAt))
	if s.isUnique(err) {
		return ErrConflict
	}
	return err
}

func (s *DB) GetDeviceCode(ctx context.Context, hash []byte) (*DeviceCode, error) {
	return scanDevice(s.q.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM device_codes WHERE hash=?`, hash))
}

func (s *DB) GetDeviceCodeByUserCode(ctx context.Context, userCode string) (*DeviceCode, error) {
	return scanDevice(s.q.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM device_codes WHERE user_code=?`, userCode))
}

func (s *DB) UpdateDeviceCode(ctx context.Context, d *DeviceCode, from string) error {
	err := mustAffect(s.q.ExecContext(ctx, `UPDATE device_codes SET granted_scopes=?, status=?, user_id=?,
		interval_seconds=?, last_poll_at=? WHERE hash=? AND status=?`,
		joinScopes(d.GrantedScopes), d.Status, d.UserID, d.Interval, ts(d.LastPollAt), d.Hash, from))
	if errors.Is(err, ErrNotFound) {
		return ErrConflict
	}
	return err
}

// ---- sessions

func (s *DB) InsertSession(ctx context.Context, x *Session) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO sessions (hash, user_id, expires_at) VALUES (?,?,?)`,
		x.Hash, x.UserID, ts(x.ExpiresAt))
	return err
}

func (s *DB) GetSession(ctx context.Context, hash []byte) (*Session, error) {
	var x Session
	var exp int64
	err := s.q.QueryRowContext(ctx, `SELECT hash, user_id, expires_at FROM sessions WHERE hash=?`, hash).
		Scan(&x.Hash, &x.UserID, &exp)
	if err != nil {
		return nil, notFound(err)
	}
	x.ExpiresAt = fromTS(exp)
	return &x, nil
}

func (s *DB) DeleteSessionsOfUser(ctx context.Context, userID uint64) error {
	_, err := s.q.ExecContext(ctx, `DELETE FROM sessions WHERE user_id=?`, userID)
	return err
}

// ---- webhooks

const webhookColumns = `id, app_id, event_type, body, state, attempts, next_attempt_at, last_error, created_at, delivered_at`

func scanWebhook(row interface{ Scan(...any) error }) (*WebhookDelivery, error) {
	var d WebhookDelivery
	var next, created, delivered int64
	err := row.Scan(&d.ID, &d.AppID, &d.EventType, &d.Body, &d.State, &d.Attempts, &next, &d.LastError,
		&created, &delivered)
	if err != nil {
		return nil, notFound(err)
	}
	d.NextAttemptAt, d.CreatedAt, d.DeliveredAt = fromTS(next), fromTS(created), fromTS(delivered)
	return &d, nil
}

func (s *DB) EnqueueWebhook(ctx context.Context, d *WebhookDelivery) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+webhookColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?)`,
		d.ID, d.AppID, d.EventType, d.Body, d.State, d.Attempts, ts(d.NextAttemptAt), d.LastError,
		ts(d.CreatedAt), ts(d.DeliveredAt))
	return err
}

// claimUntil is the end of a claim made at now: 0 (no claim) where the store claims nothing.
func (s *DB) claimUntil(now time.Time) int64 {
	if s.opts.claimLease <= 0 {
		return 0
	}
	return ts(now.Add(s.opts.claimLease))
}

// DueWebhooks claims the deliveries in one statement; rows another node is claiming are
// skipped, not waited for.
func (s *DB) DueWebhooks(ctx context.Context, now time.Time, limit int) ([]WebhookDelivery, error) {
	rows, err := s.q.QueryContext(ctx, `UPDATE webhook_deliveries SET claimed_until=? WHERE id IN
		(SELECT id FROM webhook_deliveries WHERE state=? AND next_attempt_at<=? AND claimed_until<=?
		ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED)
		RETURNING `+webhookColumns, s.claimUntil(now), WebhookPending, ts(now), ts(now), limit)
	if err != nil {
		return nil, err
	}
	due, err := collect(rows, scanWebhook)
	slices.SortFunc(due, func(a, b WebhookDelivery) int { // RETURNING has no order
		return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	return due, err
}

func (s *DB) NextWebhookDue(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.q.QueryRowContext(ctx, `SELECT MIN(CASE WHEN claimed_until > next_attempt_at THEN claimed_until
		ELSE next_attempt_at END) FROM webhook_deliveries WHERE state=?`,
		WebhookPending).Scan(&next)
	if err != nil || !next.Valid {
		return time.Time{}, false, err
	}
	return time.Unix(0, next.Int64).UTC(), true, nil
}

func (s *DB) UpdateWebhook(ctx context.Context, d *WebhookDelivery) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE webhook_deliveries SET state=?, attempts=?, next_attempt_at=?,
		last_error=?, delivered_at=?, claimed_until=0 WHERE id=?`,
		d.State, d.Attempts, ts(d.NextAttemptAt), d.LastError, ts(d.DeliveredAt), d.ID))
}

func (s *DB) GetWebhook(ctx context.Context, id uint64) (*WebhookDelivery, error) {
	return scanWebhook(s.q.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhook_deliveries WHERE id=?`, id))
}

// ---- OIDC

var upsertOIDC = upsert(`oidc_configs`, `app_id, issuer, client_id, jwks_uri, jwks, updated_at`, `app_id`)

func (s *DB) PutOIDCConfig(ctx context.Context, c *OIDCConfig) error {
	_, err := s.q.ExecContext(ctx, upsertOIDC, c.AppID, c.Issuer, c.ClientID, c.JWKSURI, c.JWKS, ts(c.UpdatedAt))
	return err
}

func (s *DB) GetOIDCConfig(ctx context.Context, appID uint64) (*OIDCConfig, error) {
	var c OIDCConfig
	var updated int64
	err := s.q.QueryRowContext(ctx, `SELECT app_id, issuer, client_id, jwks_uri, jwks, updated_at FROM oidc_configs
		WHERE app_id=?`, appID).Scan(&c.AppID, &c.Issuer, &c.ClientID, &c.JWKSURI, &c.JWKS, &updated)
	if err != nil {
		return nil, notFound(err)
	}
	c.UpdatedAt = fromTS(updated)
	return &c, nil
}

// ---- settings

var upsertSetting = upsert(`settings`, `key, value`, `key`)

func (s *DB) GetSetting(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	if err := s.q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key=?`, key).Scan(&v); err != nil {
		return nil, notFound(err)
	}
	return v, nil
}

func (s *DB) PutSetting(ctx context.Context, key string, value []byte) error {
	_, err := s.q.ExecContext(ctx, upsertSetting, key, value)
	return err
}

var _ Store = (*DB)(nil)
