package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// SQLite is the Store on an embedded SQLite database.
type SQLite struct {
	db    *sql.DB
	cache *stmtCache
	q     querier // cachedQuerier on the database or the transaction
	tx    bool
	memo  *memo
}

// DatabaseFile is the name of the database inside a data directory.
const DatabaseFile = "sdkpp.db"

// OpenSQLite opens (creating it when needed) the database in dataDir and applies the
// migrations. An empty dataDir gives a private in-memory database.
func OpenSQLite(ctx context.Context, dataDir string) (*SQLite, error) {
	dsn := ":memory:"
	if dataDir != "" {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("store: create data directory: %w", err)
		}
		p := filepath.Join(dataDir, DatabaseFile)
		// WAL with synchronous=NORMAL: a committed transaction survives the service crashing or
		// being killed (the fault test restarts it and expects every message); only a power loss
		// or an operating-system crash can lose the last transactions before a checkpoint, which
		// is durable enough for a game's social service and spares an fsync per message.
		dsn = "file:" + (&url.URL{Path: p}).EscapedPath() +
			"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	// One connection: an in-memory database lives in its connection, and one writer at a time is
	// what SQLite allows anyway.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	cache := newStmtCache(db)
	s := &SQLite{db: db, cache: cache, q: cachedQuerier{c: cache}, memo: newMemo()}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *SQLite) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	var applied int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&applied); err != nil {
		return fmt.Errorf("store: read migrations: %w", err)
	}
	if applied > len(migrations) {
		return fmt.Errorf("store: the database has %d migrations, this build knows %d: it is newer than this service", applied, len(migrations))
	}
	for i := applied; i < len(migrations); i++ {
		err := s.WithTx(ctx, func(st Store) error {
			q := st.(*SQLite).q.(cachedQuerier).raw() // migrations run once: not cached
			if _, err := q.ExecContext(ctx, migrations[i]); err != nil {
				return err
			}
			_, err := q.ExecContext(ctx, `INSERT INTO schema_migrations (version) VALUES (?)`, i+1)
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migration %d: %w", i+1, err)
		}
	}
	return nil
}

// Close closes the database.
func (s *SQLite) Close() error {
	if s.tx {
		return errors.New("store: Close inside a transaction")
	}
	s.cache.Close()
	return s.db.Close()
}

// WithTx runs fn in a transaction.
func (s *SQLite) WithTx(ctx context.Context, fn func(Store) error) error {
	if s.tx {
		return fn(s)
	}
	ctx = uncancelled(ctx)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	// Queries first seen in this transaction are prepared once it has ended.
	defer s.cache.prepareWanted(ctx)
	if err := fn(&SQLite{db: s.db, cache: s.cache, q: cachedQuerier{c: s.cache, tx: tx}, tx: true, memo: s.memo}); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// MaxID returns the largest id in the id-keyed tables.
func (s *SQLite) MaxID(ctx context.Context) (uint64, error) {
	var max int64
	err := s.q.QueryRowContext(ctx, `SELECT MAX(m) FROM (
		SELECT COALESCE(MAX(id), 0) AS m FROM applications
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM skus
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM subscriptions
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM audit_log
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM users
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM authorizations
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM webhook_deliveries
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM lobbies
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM lobby_messages
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM dm_channels
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM dm_messages
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guilds
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_channels
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_roles
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_messages
		UNION ALL SELECT COALESCE(MAX(id), 0) FROM guild_attachments)`).Scan(&max)
	return uint64(max), err
}

// Times are stored as Unix nanoseconds; the zero time as 0.
func ts(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromTS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func joinScopes(s []string) string  { return strings.Join(s, " ") }
func splitScopes(s string) []string { return strings.Fields(s) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// notFound turns sql.ErrNoRows into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// isUnique tells whether err is a unique-constraint violation.
func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// mustAffect returns ErrNotFound when an update touched no row.
func mustAffect(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

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

func (s *SQLite) CreateApplication(ctx context.Context, a *Application) error {
	uris, _ := json.Marshal(nonNil(a.RedirectURIs))
	_, err := s.q.ExecContext(ctx, `INSERT INTO applications (`+appColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		a.ID, a.Name, a.PublisherID, a.ParentID, b2i(a.PublicClient), b2i(a.PremiumApproved), string(uris),
		a.WebhookURL, a.ClientSecretHash, a.BotTokenHash, a.BotUserID, a.WebhookKey, ts(a.CreatedAt),
		b2i(a.SDKTermsAccepted), int64(a.Flags&MaxApplicationFlags), b2i(a.ChannelObfuscation))
	if isUnique(err) {
		return ErrConflict
	}
	return err
}

func (s *SQLite) UpdateApplication(ctx context.Context, a *Application) error {
	s.memo.changed()
	uris, _ := json.Marshal(nonNil(a.RedirectURIs))
	return mustAffect(s.q.ExecContext(ctx, `UPDATE applications SET name=?, publisher_id=?, parent_id=?,
		public_client=?, premium_approved=?, redirect_uris=?, webhook_url=?, client_secret_hash=?,
		bot_token_hash=?, bot_user_id=?, webhook_key=?, sdk_terms_accepted=?, flags=?, channel_obfuscation=?
		WHERE id=?`,
		a.Name, a.PublisherID, a.ParentID, b2i(a.PublicClient), b2i(a.PremiumApproved), string(uris),
		a.WebhookURL, a.ClientSecretHash, a.BotTokenHash, a.BotUserID, a.WebhookKey, b2i(a.SDKTermsAccepted),
		int64(a.Flags&MaxApplicationFlags), b2i(a.ChannelObfuscation), a.ID))
}

func (s *SQLite) GetApplication(ctx context.Context, id uint64) (*Application, error) {
	return scanApp(s.q.QueryRowContext(ctx, `SELECT `+appColumns+` FROM applications WHERE id=?`, id))
}

func (s *SQLite) GetApplicationByBotToken(ctx context.Context, hash []byte) (*Application, error) {
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

func (s *SQLite) CreateUser(ctx context.Context, u *User) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO users (`+userInsertColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		u.ID, u.Username, u.GlobalName, u.PasswordHash, b2i(u.Bot), b2i(u.Provisional), u.ProvisionalAppID,
		u.PremiumType, b2i(u.BanPermanent), ts(u.BannedUntil), u.RestrictedBy, ts(u.CreatedAt))
	if isUnique(err) {
		return ErrConflict
	}
	return err
}

func (s *SQLite) UpdateUser(ctx context.Context, u *User) error {
	s.memo.changed()
	res, err := s.q.ExecContext(ctx, `UPDATE users SET username=?, global_name=?, password_hash=?, bot=?,
		provisional=?, provisional_app_id=?, premium_type=?, ban_permanent=?, banned_until=?, restricted_by=?
		WHERE id=?`,
		u.Username, u.GlobalName, u.PasswordHash, b2i(u.Bot), b2i(u.Provisional), u.ProvisionalAppID,
		u.PremiumType, b2i(u.BanPermanent), ts(u.BannedUntil), u.RestrictedBy, u.ID)
	if isUnique(err) {
		return ErrConflict
	}
	return mustAffect(res, err)
}

func (s *SQLite) GetUser(ctx context.Context, id uint64) (*User, error) {
	return scanUser(s.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id=?`, id))
}

func (s *SQLite) GetUserByUsername(ctx context.Context, username string) (*User, error) {
	return scanUser(s.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE username=?`, username))
}

// ---- identities

const identityColumns = `app_id, type, external_id, user_id, provisional_user_id, created_at`

func scanIdentity(row interface{ Scan(...any) error }) (*Identity, error) {
	var i Identity
	var created int64
	if err := row.Scan(&i.AppID, &i.Type, &i.ExternalID, &i.UserID, &i.ProvisionalUserID, &created); err != nil {
		return nil, notFound(err)
	}
	i.CreatedAt = fromTS(created)
	return &i, nil
}

func (s *SQLite) GetIdentity(ctx context.Context, appID uint64, typ, externalID string) (*Identity, error) {
	return scanIdentity(s.q.QueryRowContext(ctx, `SELECT `+identityColumns+` FROM identities
		WHERE app_id=? AND type=? AND external_id=?`, appID, typ, externalID))
}

func (s *SQLite) PutIdentity(ctx context.Context, i *Identity) error {
	_, err := s.q.ExecContext(ctx, `INSERT OR REPLACE INTO identities (`+identityColumns+`) VALUES (?,?,?,?,?,?)`,
		i.AppID, i.Type, i.ExternalID, i.UserID, i.ProvisionalUserID, ts(i.CreatedAt))
	return err
}

func (s *SQLite) ListIdentitiesByUser(ctx context.Context, userID uint64) ([]Identity, error) {
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

func (s *SQLite) PutAuthorization(ctx context.Context, a *Authorization) error {
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

func (s *SQLite) GetAuthorization(ctx context.Context, id uint64) (*Authorization, error) {
	return scanAuth(s.q.QueryRowContext(ctx, `SELECT `+authColumns+` FROM authorizations WHERE id=?`, id))
}

func (s *SQLite) FindAuthorization(ctx context.Context, appID, userID uint64) (*Authorization, error) {
	return scanAuth(s.q.QueryRowContext(ctx, `SELECT `+authColumns+` FROM authorizations
		WHERE app_id=? AND user_id=? AND parent_id=0`, appID, userID))
}

func (s *SQLite) ListAuthorizationsByUser(ctx context.Context, userID uint64) ([]Authorization, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+authColumns+` FROM authorizations WHERE user_id=? ORDER BY id`, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanAuth)
}

func (s *SQLite) ListChildAuthorizations(ctx context.Context, parentID uint64) ([]Authorization, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+authColumns+` FROM authorizations WHERE parent_id=? ORDER BY id`, parentID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanAuth)
}

func (s *SQLite) DeleteAuthorization(ctx context.Context, id uint64) error {
	s.memo.changed()
	return s.WithTx(ctx, func(st Store) error {
		q := st.(*SQLite).q
		if _, err := q.ExecContext(ctx, `DELETE FROM tokens WHERE authorization_id=?`, id); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, `DELETE FROM authorizations WHERE id=?`, id)
		return err
	})
}

// ---- tokens

const tokenColumns = `hash, kind, authorization_id, app_id, user_id, scopes, expires_at, created_at, grant_id, used_at`

func (s *SQLite) InsertToken(ctx context.Context, t *Token) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?)`,
		t.Hash, t.Kind, t.AuthorizationID, t.AppID, t.UserID, joinScopes(t.Scopes), ts(t.ExpiresAt), ts(t.CreatedAt),
		t.GrantID, ts(t.UsedAt))
	return err
}

func (s *SQLite) GetToken(ctx context.Context, hash []byte) (*Token, error) {
	if s.tx { // a transaction may read its own uncommitted token: not for the cache
		return s.readToken(ctx, hash)
	}
	if t, ok := s.memo.token(hash); ok {
		return &t, nil
	}
	epoch := s.memo.epoch.Load()
	t, err := s.readToken(ctx, hash)
	if err == nil {
		s.memo.keepToken(t, epoch)
	}
	return t, err
}

func (s *SQLite) readToken(ctx context.Context, hash []byte) (*Token, error) {
	var t Token
	var scopes string
	var exp, created, used int64
	err := s.q.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash=?`, hash).
		Scan(&t.Hash, &t.Kind, &t.AuthorizationID, &t.AppID, &t.UserID, &scopes, &exp, &created, &t.GrantID, &used)
	if err != nil {
		return nil, notFound(err)
	}
	t.Scopes, t.ExpiresAt, t.CreatedAt, t.UsedAt = splitScopes(scopes), fromTS(exp), fromTS(created), fromTS(used)
	return &t, nil
}

func (s *SQLite) DeleteToken(ctx context.Context, hash []byte) error {
	s.memo.changed()
	return mustAffect(s.q.ExecContext(ctx, `DELETE FROM tokens WHERE hash=?`, hash))
}

func (s *SQLite) UseToken(ctx context.Context, hash []byte, at time.Time) error {
	s.memo.changed()
	return mustAffect(s.q.ExecContext(ctx, `UPDATE tokens SET used_at=? WHERE hash=? AND used_at=0`, ts(at), hash))
}

// ---- grants

func (s *SQLite) CreateGrant(ctx context.Context, g *Grant) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO token_grants (id, app_id, user_id, created_at, revoked_at) VALUES (?,?,?,?,?)`,
		g.ID, g.AppID, g.UserID, ts(g.CreatedAt), ts(g.RevokedAt))
	return err
}

func (s *SQLite) GetGrant(ctx context.Context, id uint64) (*Grant, error) {
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

func (s *SQLite) RevokeGrant(ctx context.Context, id uint64, at time.Time) (*Grant, error) {
	s.memo.changed()
	var g *Grant
	err := s.WithTx(ctx, func(st Store) error {
		q := st.(*SQLite).q
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

func (s *SQLite) InsertAuthCode(ctx context.Context, c *AuthCode) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO auth_codes (`+codeColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		c.Hash, c.AppID, c.UserID, c.RedirectURI, joinScopes(c.Scopes), c.CodeChallenge, c.Nonce,
		c.IntegrationType, ts(c.ExpiresAt), b2i(c.Used), c.GrantID)
	return err
}

func (s *SQLite) UseAuthCode(ctx context.Context, hash []byte, grant Grant) (*AuthCode, error) {
	var c AuthCode
	err := s.WithTx(ctx, func(st Store) error {
		q := st.(*SQLite).q
		var scopes string
		var exp int64
		var used int
		err := q.QueryRowContext(ctx, `SELECT `+codeColumns+` FROM auth_codes WHERE hash=?`, hash).
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

func (s *SQLite) InsertDeviceCode(ctx context.Context, d *DeviceCode) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO device_codes (`+deviceColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		d.Hash, d.UserCode, d.AppID, joinScopes(d.Scopes), joinScopes(d.GrantedScopes), d.Status, d.UserID,
		d.Interval, ts(d.LastPollAt), ts(d.ExpiresAt), ts(d.CreatedAt))
	if isUnique(err) {
		return ErrConflict
	}
	return err
}

func (s *SQLite) GetDeviceCode(ctx context.Context, hash []byte) (*DeviceCode, error) {
	return scanDevice(s.q.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM device_codes WHERE hash=?`, hash))
}

func (s *SQLite) GetDeviceCodeByUserCode(ctx context.Context, userCode string) (*DeviceCode, error) {
	return scanDevice(s.q.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM device_codes WHERE user_code=?`, userCode))
}

func (s *SQLite) UpdateDeviceCode(ctx context.Context, d *DeviceCode) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE device_codes SET granted_scopes=?, status=?, user_id=?,
		interval_seconds=?, last_poll_at=? WHERE hash=?`,
		joinScopes(d.GrantedScopes), d.Status, d.UserID, d.Interval, ts(d.LastPollAt), d.Hash))
}

// ---- sessions

func (s *SQLite) InsertSession(ctx context.Context, x *Session) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO sessions (hash, user_id, expires_at) VALUES (?,?,?)`,
		x.Hash, x.UserID, ts(x.ExpiresAt))
	return err
}

func (s *SQLite) GetSession(ctx context.Context, hash []byte) (*Session, error) {
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

func (s *SQLite) DeleteSessionsOfUser(ctx context.Context, userID uint64) error {
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

func (s *SQLite) EnqueueWebhook(ctx context.Context, d *WebhookDelivery) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+webhookColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?)`,
		d.ID, d.AppID, d.EventType, d.Body, d.State, d.Attempts, ts(d.NextAttemptAt), d.LastError,
		ts(d.CreatedAt), ts(d.DeliveredAt))
	return err
}

func (s *SQLite) DueWebhooks(ctx context.Context, now time.Time, limit int) ([]WebhookDelivery, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhook_deliveries
		WHERE state=? AND next_attempt_at<=? ORDER BY next_attempt_at, id LIMIT ?`, WebhookPending, ts(now), limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanWebhook)
}

func (s *SQLite) NextWebhookDue(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.q.QueryRowContext(ctx, `SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE state=?`,
		WebhookPending).Scan(&next)
	if err != nil || !next.Valid {
		return time.Time{}, false, err
	}
	return time.Unix(0, next.Int64).UTC(), true, nil
}

func (s *SQLite) UpdateWebhook(ctx context.Context, d *WebhookDelivery) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE webhook_deliveries SET state=?, attempts=?, next_attempt_at=?,
		last_error=?, delivered_at=? WHERE id=?`,
		d.State, d.Attempts, ts(d.NextAttemptAt), d.LastError, ts(d.DeliveredAt), d.ID))
}

func (s *SQLite) GetWebhook(ctx context.Context, id uint64) (*WebhookDelivery, error) {
	return scanWebhook(s.q.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhook_deliveries WHERE id=?`, id))
}

// ---- OIDC

func (s *SQLite) PutOIDCConfig(ctx context.Context, c *OIDCConfig) error {
	_, err := s.q.ExecContext(ctx, `INSERT OR REPLACE INTO oidc_configs (app_id, issuer, client_id, jwks_uri, jwks, updated_at)
		VALUES (?,?,?,?,?,?)`, c.AppID, c.Issuer, c.ClientID, c.JWKSURI, c.JWKS, ts(c.UpdatedAt))
	return err
}

func (s *SQLite) GetOIDCConfig(ctx context.Context, appID uint64) (*OIDCConfig, error) {
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

func (s *SQLite) GetSetting(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	if err := s.q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key=?`, key).Scan(&v); err != nil {
		return nil, notFound(err)
	}
	return v, nil
}

func (s *SQLite) PutSetting(ctx context.Context, key string, value []byte) error {
	_, err := s.q.ExecContext(ctx, `INSERT OR REPLACE INTO settings (key, value) VALUES (?,?)`, key, value)
	return err
}

var _ Store = (*SQLite)(nil)
