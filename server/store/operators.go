package store

import (
	"context"
	"time"
)

// Operator roles of the operator console, each allowed what the one before it is and more.
const (
	RoleViewer    = "viewer"    // reads
	RoleModerator = "moderator" // and bans, unbans, revokes tokens
	RoleAdmin     = "admin"     // and retries webhook deliveries
)

// Operator is an account of the operator console, separate from the players' accounts.
type Operator struct {
	ID           uint64
	Username     string // unique, case-insensitively
	PasswordHash []byte // secret.HashPassword, as players' passwords
	Role         string // RoleViewer, RoleModerator or RoleAdmin
	CreatedAt    time.Time
}

// OperatorSession is a signed-in console session, stored by the hash of its cookie's secret.
type OperatorSession struct {
	Hash       []byte
	OperatorID uint64
	CreatedAt  time.Time
	ExpiresAt  time.Time
}

// OperatorAction is one entry of the console's audit log: who did what to what, and when.
type OperatorAction struct {
	ID         uint64
	OperatorID uint64
	Operator   string // the operator's username then
	Action     string // e.g. "ban", "unban", "revoke", "retry_webhook"
	Target     string // what it acted on, e.g. "user 123"
	Detail     string
	CreatedAt  time.Time
}

// RelationshipCount is how many relationships of one type a user has (platform and game ones).
type RelationshipCount struct {
	Type  int
	Count int
}

// OperatorStore keeps the operator console's accounts, sessions and audit log, and the reads
// only the console makes.
type OperatorStore interface {
	// CreateOperator adds an operator; ErrConflict when the username is taken.
	CreateOperator(ctx context.Context, o *Operator) error
	GetOperator(ctx context.Context, id uint64) (*Operator, error)
	GetOperatorByUsername(ctx context.Context, username string) (*Operator, error)
	ListOperators(ctx context.Context) ([]Operator, error)
	// SetOperatorRole changes an operator's role; ErrNotFound when there is no such operator.
	SetOperatorRole(ctx context.Context, id uint64, role string) error
	// DeleteOperator removes an operator and its sessions (its audit log entries stay);
	// ErrNotFound when there is no such operator.
	DeleteOperator(ctx context.Context, id uint64) error

	InsertOperatorSession(ctx context.Context, s *OperatorSession) error
	GetOperatorSession(ctx context.Context, hash []byte) (*OperatorSession, error)
	DeleteOperatorSession(ctx context.Context, hash []byte) error
	// DeleteExpiredOperatorSessions removes the sessions that have expired at now (ExpiresAt
	// not after now) and returns how many it removed.
	DeleteExpiredOperatorSessions(ctx context.Context, now time.Time) (int, error)

	// AppendOperatorAction writes an audit log entry.
	AppendOperatorAction(ctx context.Context, a *OperatorAction) error
	// ListOperatorActions returns up to limit audit log entries, newest first.
	ListOperatorActions(ctx context.Context, limit int) ([]OperatorAction, error)

	// CountRelationships counts the user's relationships (rows it owns, any app) by type.
	CountRelationships(ctx context.Context, userID uint64) ([]RelationshipCount, error)
	// ListApplications returns up to limit applications, by id.
	ListApplications(ctx context.Context, limit int) ([]Application, error)
	// ListAppWebhooks returns up to limit of the application's webhook deliveries, newest first.
	ListAppWebhooks(ctx context.Context, appID uint64, limit int) ([]WebhookDelivery, error)
	// ListLobbies returns up to limit lobbies, the most recently active first.
	ListLobbies(ctx context.Context, limit int) ([]Lobby, error)
	// ListGuilds returns up to limit guilds, the newest first.
	ListGuilds(ctx context.Context, limit int) ([]Guild, error)
	// ListRecentGuildMessages returns up to limit of the guild's messages, every channel's,
	// the newest first.
	ListRecentGuildMessages(ctx context.Context, guildID uint64, limit int) ([]GuildMessage, error)
}

var _ OperatorStore = (*DB)(nil)

const operatorColumns = `id, username, password_hash, role, created_at`

func scanOperator(row interface{ Scan(...any) error }) (*Operator, error) {
	var o Operator
	var created int64
	if err := row.Scan(&o.ID, &o.Username, &o.PasswordHash, &o.Role, &created); err != nil {
		return nil, notFound(err)
	}
	o.CreatedAt = fromTS(created)
	return &o, nil
}

func (s *DB) CreateOperator(ctx context.Context, o *Operator) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO operators (id, username, username_key, password_hash, role, created_at)
		VALUES (?,?,LOWER(?),?,?,?)`, o.ID, o.Username, o.Username, o.PasswordHash, o.Role, ts(o.CreatedAt))
	if s.d.isUnique(err) {
		return ErrConflict
	}
	return err
}

func (s *DB) GetOperator(ctx context.Context, id uint64) (*Operator, error) {
	return scanOperator(s.q.QueryRowContext(ctx, `SELECT `+operatorColumns+` FROM operators WHERE id=?`, id))
}

func (s *DB) GetOperatorByUsername(ctx context.Context, username string) (*Operator, error) {
	return scanOperator(s.q.QueryRowContext(ctx, `SELECT `+operatorColumns+` FROM operators WHERE username_key=LOWER(?)`,
		username))
}

func (s *DB) ListOperators(ctx context.Context) ([]Operator, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+operatorColumns+` FROM operators ORDER BY username_key`)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanOperator)
}

func (s *DB) SetOperatorRole(ctx context.Context, id uint64, role string) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE operators SET role=? WHERE id=?`, role, id))
}

func (s *DB) DeleteOperator(ctx context.Context, id uint64) error {
	return s.WithTx(ctx, func(st Store) error {
		tx := st.(*DB)
		if _, err := tx.q.ExecContext(ctx, `DELETE FROM operator_sessions WHERE operator_id=?`, id); err != nil {
			return err
		}
		return mustAffect(tx.q.ExecContext(ctx, `DELETE FROM operators WHERE id=?`, id))
	})
}

func (s *DB) InsertOperatorSession(ctx context.Context, o *OperatorSession) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO operator_sessions (hash, operator_id, created_at, expires_at) VALUES (?,?,?,?)`,
		o.Hash, o.OperatorID, ts(o.CreatedAt), ts(o.ExpiresAt))
	return err
}

func (s *DB) GetOperatorSession(ctx context.Context, hash []byte) (*OperatorSession, error) {
	var o OperatorSession
	var created, expires int64
	err := s.q.QueryRowContext(ctx, `SELECT hash, operator_id, created_at, expires_at FROM operator_sessions WHERE hash=?`,
		hash).Scan(&o.Hash, &o.OperatorID, &created, &expires)
	if err != nil {
		return nil, notFound(err)
	}
	o.CreatedAt, o.ExpiresAt = fromTS(created), fromTS(expires)
	return &o, nil
}

func (s *DB) DeleteOperatorSession(ctx context.Context, hash []byte) error {
	return mustAffect(s.q.ExecContext(ctx, `DELETE FROM operator_sessions WHERE hash=?`, hash))
}

func (s *DB) DeleteExpiredOperatorSessions(ctx context.Context, now time.Time) (int, error) {
	res, err := s.q.ExecContext(ctx, `DELETE FROM operator_sessions WHERE expires_at<=?`, ts(now))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

const operatorActionColumns = `id, operator_id, operator, action, target, detail, created_at`

func scanOperatorAction(row interface{ Scan(...any) error }) (*OperatorAction, error) {
	var a OperatorAction
	var created int64
	if err := row.Scan(&a.ID, &a.OperatorID, &a.Operator, &a.Action, &a.Target, &a.Detail, &created); err != nil {
		return nil, notFound(err)
	}
	a.CreatedAt = fromTS(created)
	return &a, nil
}

func (s *DB) AppendOperatorAction(ctx context.Context, a *OperatorAction) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO operator_actions (`+operatorActionColumns+`) VALUES (?,?,?,?,?,?,?)`,
		a.ID, a.OperatorID, a.Operator, a.Action, a.Target, a.Detail, ts(a.CreatedAt))
	return err
}

func (s *DB) ListOperatorActions(ctx context.Context, limit int) ([]OperatorAction, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+operatorActionColumns+` FROM operator_actions
		ORDER BY created_at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanOperatorAction)
}

func (s *DB) CountRelationships(ctx context.Context, userID uint64) ([]RelationshipCount, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT type, COUNT(*) FROM relationships WHERE user_id=? GROUP BY type ORDER BY type`,
		userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*RelationshipCount, error) {
		var c RelationshipCount
		return &c, row.Scan(&c.Type, &c.Count)
	})
}

func (s *DB) ListApplications(ctx context.Context, limit int) ([]Application, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+appColumns+` FROM applications ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanApp)
}

func (s *DB) ListAppWebhooks(ctx context.Context, appID uint64, limit int) ([]WebhookDelivery, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhook_deliveries WHERE app_id=?
		ORDER BY created_at DESC, id DESC LIMIT ?`, appID, limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanWebhook)
}

func (s *DB) ListLobbies(ctx context.Context, limit int) ([]Lobby, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+lobbyReadColumns+` FROM lobbies
		ORDER BY CASE WHEN `+newestLobbyMessageAt+` > last_activity_at THEN `+newestLobbyMessageAt+`
		ELSE last_activity_at END DESC, id DESC LIMIT ?`,
		limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanLobby)
}

func (s *DB) ListGuilds(ctx context.Context, limit int) ([]Guild, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildColumns+` FROM guilds ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanGuild)
}

func (s *DB) ListRecentGuildMessages(ctx context.Context, guildID uint64, limit int) ([]GuildMessage, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildMessageColumns+` FROM guild_messages WHERE guild_id=?
		ORDER BY id DESC LIMIT ?`, guildID, limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanGuildMessage)
}
