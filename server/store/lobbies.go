package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"sdkpp/server/snowflake"
)

// Lobby is a group of users of one application who chat together (package lobbies). A lobby made
// by PUT /lobbies has the hash of its secret; one made by the application's backend has none.
type Lobby struct {
	ID    uint64
	AppID uint64
	// SecretHash is the SHA-256 of the join secret, nil when the lobby was made server side or its
	// secret expired. (AppID, SecretHash) is unique.
	SecretHash      []byte
	SecretExpiresAt time.Time
	// FromSecret tells that the lobby was made by PUT /lobbies (only those can be left by their
	// members), even after its secret expired.
	FromSecret  bool
	Metadata    map[string]string
	IdleTimeout time.Duration // whole seconds
	// LastActivityAt is the lobby's latest activity: a change of the lobby (written with it), or
	// its newest message, which the store reads from the messages. A message writes only itself,
	// not its lobby's row.
	LastActivityAt time.Time
	// ExpiresAt is LastActivityAt + IdleTimeout: from then on the lobby is gone. Read, it is the
	// later of the stored expiry and the newest message's time + IdleTimeout.
	ExpiresAt time.Time
	CreatedAt time.Time
}

// LobbyMember is a user's membership of a lobby.
type LobbyMember struct {
	LobbyID        uint64
	UserID         uint64
	Metadata       map[string]string
	Flags          int
	AdditionalName string // "" = none; set only by the application's backend (rule MSG-2)
	JoinedAt       time.Time
}

// LobbyMessage is a message sent in a lobby.
type LobbyMessage struct {
	ID                 uint64
	LobbyID            uint64
	AppID              uint64
	AuthorID           uint64
	Content            string
	Metadata           map[string]string
	ModerationMetadata map[string]string // set by the application's backend (rules MSG-3, MODR-1)
	Flags              int
	AdditionalName     string // the author's additional name when the message was sent (rule MSG-2)
	CreatedAt          time.Time
	// Nonce is the nonce the message was sent with when its sender enforced it; "" otherwise.
	// Only InsertLobbyMessage writes it and FindLobbyMessageByNonce reads it.
	Nonce string
}

// LobbyStore keeps lobbies, their members and their messages.
type LobbyStore interface {
	// CreateLobby inserts l; ErrConflict when its application has a lobby with that secret.
	CreateLobby(ctx context.Context, l *Lobby) error
	// UpdateLobby writes every field of l but ID, AppID and CreatedAt.
	UpdateLobby(ctx context.Context, l *Lobby) error
	// TouchLobby sets a lobby's stored activity times when its stored expiry is before expires,
	// and does nothing otherwise (nor when there is no such lobby): the idle sweep carries a
	// lobby kept alive by its messages forward so, once per idle period.
	TouchLobby(ctx context.Context, id uint64, lastActivity, expires time.Time) error
	GetLobby(ctx context.Context, id uint64) (*Lobby, error)
	GetLobbyBySecret(ctx context.Context, appID uint64, secretHash []byte) (*Lobby, error)
	// DeleteLobby deletes the lobby with its members, messages and channel link; ErrNotFound when
	// none.
	DeleteLobby(ctx context.Context, id uint64) error
	// ExpiredLobbies returns up to limit lobbies whose stored expiry is at or before now, earliest
	// first. Their ExpiresAt counts their messages, as GetLobby's does: one whose newest message
	// is younger than its idle timeout has an ExpiresAt after now, and the caller carries its
	// stored expiry forward (TouchLobby) or it is returned again.
	ExpiredLobbies(ctx context.Context, now time.Time, limit int) ([]Lobby, error)
	// NextLobbyExpiry returns the earliest stored expiry of any lobby, a lower bound of the
	// earliest ExpiresAt (messages only move a lobby's later); ok is false when there is none.
	NextLobbyExpiry(ctx context.Context) (t time.Time, ok bool, err error)
	// ListUserLobbies returns the lobbies of app that user is a member of, expired or not, by id.
	ListUserLobbies(ctx context.Context, appID, userID uint64) ([]Lobby, error)
	// CountUserLobbies counts the lobbies of app, not expired at now, that user is a member of.
	CountUserLobbies(ctx context.Context, appID, userID uint64, now time.Time) (int, error)

	// PutLobbyMember inserts or replaces a membership.
	PutLobbyMember(ctx context.Context, m *LobbyMember) error
	GetLobbyMember(ctx context.Context, lobbyID, userID uint64) (*LobbyMember, error)
	// ListLobbyMembers returns the members in the order they joined.
	ListLobbyMembers(ctx context.Context, lobbyID uint64) ([]LobbyMember, error)
	// ListLobbyMemberIDs returns the members' user ids in the order they joined: what fanning an
	// event out needs, without decoding each membership.
	ListLobbyMemberIDs(ctx context.Context, lobbyID uint64) ([]uint64, error)
	// ListLobbyMemberUsers returns the users of a lobby's members, and their identities in
	// application appID: what a lobby object with every member's user needs, in two statements
	// however many members there are.
	ListLobbyMemberUsers(ctx context.Context, lobbyID, appID uint64) ([]User, []Identity, error)
	// DeleteLobbyMember removes a membership; ErrNotFound when there was none.
	DeleteLobbyMember(ctx context.Context, lobbyID, userID uint64) error

	InsertLobbyMessage(ctx context.Context, m *LobbyMessage) error
	// InsertLobbyMessages inserts messages as InsertLobbyMessage does each; on PostgreSQL with
	// one statement for up to a hundred of them.
	InsertLobbyMessages(ctx context.Context, ms []*LobbyMessage) error
	// StoreLobbyMessages stores messages of lobby id with the webhook deliveries queued beside
	// them and, when out is not nil, the events out tells of in the outbox (AddOutbox each, their
	// ids set in out.IDs), all or nothing; it does not write the lobby (the messages are its
	// latest activity, see Lobby.LastActivityAt):
	// ErrNotFound, with nothing stored, when the lobby does not exist; ErrEpochMoved, with
	// nothing stored, when out has an epoch check that fails. On PostgreSQL it is one statement
	// (one round trip, the epoch's check included) for up to a hundred messages, deliveries and
	// events.
	StoreLobbyMessages(ctx context.Context, id uint64, ms []*LobbyMessage, hooks []*WebhookDelivery, out *OutboxRows) error
	// FindLobbyMessageByNonce returns the message of lobbyID that authorID sent at or after since
	// with the enforced nonce (ErrNotFound when there is none).
	FindLobbyMessageByNonce(ctx context.Context, lobbyID, authorID uint64, nonce string, since time.Time) (*LobbyMessage, error)
	// LatestNonceMessageAt returns when the newest lobby message with an enforced nonce sent at
	// or after since was sent; zero when there is none. It reads the messages whose ids are not
	// below since's (snowflake.At): an id is made from the clock when its message is sent, so a
	// message's id is never older than its CreatedAt.
	LatestNonceMessageAt(ctx context.Context, since time.Time) (time.Time, error)
	// GetLobbyMessage returns message id of lobbyID (ErrNotFound when it is another lobby's).
	GetLobbyMessage(ctx context.Context, lobbyID, id uint64) (*LobbyMessage, error)
	// UpdateLobbyMessage writes Content, Metadata, ModerationMetadata, Flags and AdditionalName.
	UpdateLobbyMessage(ctx context.Context, m *LobbyMessage) error
	// ListLobbyMessages returns up to limit messages of the lobby sent at or after since, newest
	// first.
	ListLobbyMessages(ctx context.Context, lobbyID uint64, since time.Time, limit int) ([]LobbyMessage, error)
	// LastLobbyMessageID returns the id of the lobby's newest message, 0 when it has none.
	LastLobbyMessageID(ctx context.Context, lobbyID uint64) (uint64, error)
	// ListLobbyMessagesAfter returns up to limit messages of the lobby with an id above after, sent
	// at or after since: the oldest such messages, newest first.
	ListLobbyMessagesAfter(ctx context.Context, lobbyID, after uint64, since time.Time, limit int) ([]LobbyMessage, error)
}

// props encodes a string map as JSON ("{}" for nil).
func props(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// readProps decodes a string map; an empty map reads as nil.
func readProps(s, what string) (map[string]string, error) {
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// ---- lobbies

const lobbyColumns = `id, app_id, secret_hash, secret_expires_at, from_secret, metadata, idle_timeout_seconds,
	last_activity_at, expires_at, created_at`

// newestLobbyMessageAt is the time of the newest message of the lobby of the row of lobbies
// being read, 0 when it has none: one step down the index lobby_messages_lobby (lobby_id, id).
const newestLobbyMessageAt = `COALESCE((SELECT m.created_at FROM lobby_messages m WHERE m.lobby_id = lobbies.id
	ORDER BY m.id DESC LIMIT 1), 0)`

// lobbyReadColumns are what scanLobby reads: the lobby's columns and its newest message's time.
const lobbyReadColumns = lobbyColumns + `, ` + newestLobbyMessageAt

// lobbyAliveByMessage is the condition that the lobby of the row of lobbies being read has a
// message younger than its idle timeout at the argument (a time, ts).
const lobbyAliveByMessage = newestLobbyMessageAt + ` + idle_timeout_seconds * 1000000000 > ?`

// scanLobby reads lobbyReadColumns: the activity times are the later of the stored ones and
// those the newest message gives.
func scanLobby(row interface{ Scan(...any) error }) (*Lobby, error) {
	var l Lobby
	var meta string
	var fromSecret int
	var idle, secretExp, last, exp, created, newest int64
	err := row.Scan(&l.ID, &l.AppID, &l.SecretHash, &secretExp, &fromSecret, &meta, &idle, &last, &exp, &created, &newest)
	if err != nil {
		return nil, notFound(err)
	}
	l.FromSecret, l.IdleTimeout = fromSecret != 0, time.Duration(idle)*time.Second
	if newest != 0 {
		last = max(last, newest)
		exp = max(exp, newest+int64(l.IdleTimeout))
	}
	l.SecretExpiresAt, l.LastActivityAt, l.ExpiresAt, l.CreatedAt = fromTS(secretExp), fromTS(last), fromTS(exp), fromTS(created)
	if l.Metadata, err = readProps(meta, "lobby metadata"); err != nil {
		return nil, err
	}
	return &l, nil
}

func (s *DB) CreateLobby(ctx context.Context, l *Lobby) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO lobbies (`+lobbyColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?)`,
		l.ID, l.AppID, nilIfEmpty(l.SecretHash), ts(l.SecretExpiresAt), b2i(l.FromSecret), props(l.Metadata),
		int64(l.IdleTimeout/time.Second), ts(l.LastActivityAt), ts(l.ExpiresAt), ts(l.CreatedAt))
	if s.isUnique(err) {
		return ErrConflict
	}
	return err
}

func (s *DB) UpdateLobby(ctx context.Context, l *Lobby) error {
	res, err := s.q.ExecContext(ctx, `UPDATE lobbies SET secret_hash=?, secret_expires_at=?, from_secret=?, metadata=?,
		idle_timeout_seconds=?, last_activity_at=?, expires_at=? WHERE id=?`,
		nilIfEmpty(l.SecretHash), ts(l.SecretExpiresAt), b2i(l.FromSecret), props(l.Metadata),
		int64(l.IdleTimeout/time.Second), ts(l.LastActivityAt), ts(l.ExpiresAt), l.ID)
	if s.isUnique(err) {
		return ErrConflict
	}
	return mustAffect(res, err)
}

func (s *DB) TouchLobby(ctx context.Context, id uint64, lastActivity, expires time.Time) error {
	_, err := s.q.ExecContext(ctx, `UPDATE lobbies SET last_activity_at=?, expires_at=? WHERE id=? AND expires_at<?`,
		ts(lastActivity), ts(expires), id, ts(expires))
	return err
}

// nilIfEmpty stores an empty hash as NULL, which the unique index does not compare.
func nilIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

func (s *DB) GetLobby(ctx context.Context, id uint64) (*Lobby, error) {
	return scanLobby(s.q.QueryRowContext(ctx, `SELECT `+lobbyReadColumns+` FROM lobbies WHERE id=?`, id))
}

func (s *DB) GetLobbyBySecret(ctx context.Context, appID uint64, secretHash []byte) (*Lobby, error) {
	return scanLobby(s.q.QueryRowContext(ctx, `SELECT `+lobbyReadColumns+` FROM lobbies WHERE app_id=? AND secret_hash=?`,
		appID, secretHash))
}

// DeleteLobby deletes the lobby's row first, then its messages, members and links. On
// PostgreSQL a commit of messages locks the lobby's row (FOR KEY SHARE) as it checks that the
// lobby exists: one that took it before the deletion makes the deletion wait until it ends, and
// the deletion's next statements see its messages, and delete them; one that comes after waits
// for the deletion and then stores nothing. With the messages deleted first, a commit that
// ended between that statement and the row's deletion left its messages behind.
func (s *DB) DeleteLobby(ctx context.Context, id uint64) error {
	return s.WithTx(ctx, func(st Store) error {
		q := st.(*DB).q
		if err := mustAffect(q.ExecContext(ctx, `DELETE FROM lobbies WHERE id=?`, id)); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM lobby_messages WHERE lobby_id=?`, id); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM lobby_members WHERE lobby_id=?`, id); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, `DELETE FROM lobby_channel_links WHERE lobby_id=?`, id)
		return err
	})
}

func (s *DB) ExpiredLobbies(ctx context.Context, now time.Time, limit int) ([]Lobby, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+lobbyReadColumns+` FROM lobbies WHERE expires_at<=?
		ORDER BY expires_at, id LIMIT ?`, ts(now), limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanLobby)
}

func (s *DB) NextLobbyExpiry(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	if err := s.q.QueryRowContext(ctx, `SELECT MIN(expires_at) FROM lobbies`).Scan(&next); err != nil || !next.Valid {
		return time.Time{}, false, err
	}
	return fromTS(next.Int64), true, nil
}

func (s *DB) ListUserLobbies(ctx context.Context, appID, userID uint64) ([]Lobby, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+lobbyReadColumns+` FROM lobbies WHERE app_id=?
		AND id IN (SELECT lobby_id FROM lobby_members WHERE user_id=?) ORDER BY id`, appID, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanLobby)
}

func (s *DB) CountUserLobbies(ctx context.Context, appID, userID uint64, now time.Time) (int, error) {
	var n int
	err := s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM lobbies WHERE app_id=? AND (expires_at>? OR `+lobbyAliveByMessage+`)
		AND id IN (SELECT lobby_id FROM lobby_members WHERE user_id=?)`, appID, ts(now), ts(now), userID).Scan(&n)
	return n, err
}

// ---- lobby members

const memberColumns = `lobby_id, user_id, metadata, flags, additional_name, joined_at`

var upsertLobbyMember = upsert(`lobby_members`, memberColumns, `lobby_id, user_id`)

func scanMember(row interface{ Scan(...any) error }) (*LobbyMember, error) {
	var m LobbyMember
	var meta string
	var joined int64
	if err := row.Scan(&m.LobbyID, &m.UserID, &meta, &m.Flags, &m.AdditionalName, &joined); err != nil {
		return nil, notFound(err)
	}
	m.JoinedAt = fromTS(joined)
	var err error
	if m.Metadata, err = readProps(meta, "member metadata"); err != nil {
		return nil, err
	}
	return &m, nil
}

func (s *DB) PutLobbyMember(ctx context.Context, m *LobbyMember) error {
	_, err := s.q.ExecContext(ctx, upsertLobbyMember,
		m.LobbyID, m.UserID, props(m.Metadata), m.Flags, m.AdditionalName, ts(m.JoinedAt))
	return err
}

func (s *DB) GetLobbyMember(ctx context.Context, lobbyID, userID uint64) (*LobbyMember, error) {
	return scanMember(s.q.QueryRowContext(ctx, `SELECT `+memberColumns+` FROM lobby_members WHERE lobby_id=? AND user_id=?`,
		lobbyID, userID))
}

func (s *DB) ListLobbyMembers(ctx context.Context, lobbyID uint64) ([]LobbyMember, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+memberColumns+` FROM lobby_members WHERE lobby_id=?
		ORDER BY joined_at, user_id`, lobbyID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanMember)
}

func (s *DB) ListLobbyMemberUsers(ctx context.Context, lobbyID, appID uint64) ([]User, []Identity, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+prefixed("u.", userColumns)+` FROM users u
		JOIN lobby_members m ON m.user_id = u.id WHERE m.lobby_id=?`, lobbyID)
	if err != nil {
		return nil, nil, err
	}
	users, err := collect(rows, scanUser)
	if err != nil {
		return nil, nil, err
	}
	rows, err = s.q.QueryContext(ctx, `SELECT `+prefixed("i.", identityColumns)+` FROM identities i
		JOIN lobby_members m ON m.user_id = i.user_id WHERE m.lobby_id=? AND i.app_id=?
		ORDER BY i.user_id, i.type, i.external_id`, lobbyID, appID)
	if err != nil {
		return nil, nil, err
	}
	ids, err := collect(rows, scanIdentity)
	return users, ids, err
}

// prefixed qualifies each column of a column list with prefix (a table alias and a dot).
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

func (s *DB) ListLobbyMemberIDs(ctx context.Context, lobbyID uint64) ([]uint64, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT user_id FROM lobby_members WHERE lobby_id=?
		ORDER BY joined_at, user_id`, lobbyID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []uint64
	for rows.Next() {
		var id uint64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func (s *DB) DeleteLobbyMember(ctx context.Context, lobbyID, userID uint64) error {
	return mustAffect(s.q.ExecContext(ctx, `DELETE FROM lobby_members WHERE lobby_id=? AND user_id=?`, lobbyID, userID))
}

// ---- lobby messages

const lobbyMessageColumns = `id, lobby_id, app_id, author_id, content, metadata, moderation_metadata, flags,
	additional_name, created_at`

func scanLobbyMessage(row interface{ Scan(...any) error }) (*LobbyMessage, error) {
	var m LobbyMessage
	var meta, mod string
	var created int64
	err := row.Scan(&m.ID, &m.LobbyID, &m.AppID, &m.AuthorID, &m.Content, &meta, &mod, &m.Flags, &m.AdditionalName, &created)
	if err != nil {
		return nil, notFound(err)
	}
	m.CreatedAt = fromTS(created)
	if m.Metadata, err = readProps(meta, "message metadata"); err != nil {
		return nil, err
	}
	if m.ModerationMetadata, err = readProps(mod, "moderation metadata"); err != nil {
		return nil, err
	}
	return &m, nil
}

func (s *DB) InsertLobbyMessage(ctx context.Context, m *LobbyMessage) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO lobby_messages (`+lobbyMessageColumns+`, nonce) VALUES `+lobbyMessageRow,
		lobbyMessageArgs(nil, m, nil)...)
	return err
}

func (s *DB) StoreLobbyMessages(ctx context.Context, id uint64, ms []*LobbyMessage, hooks []*WebhookDelivery, out *OutboxRows) error {
	var check *OutboxRows // its epoch
	if out != nil && out.EpochKey != "" {
		check = out
	}
	if out != nil && len(out.Data) == 0 {
		out = nil
	}
	if s.d.name == "postgres" && len(ms) <= maxRowsPerInsert && len(hooks) <= maxRowsPerInsert &&
		(out == nil || len(out.Data) <= maxRowsPerInsert) {
		err := s.storeLobbyMessages(ctx, id, ms, hooks, out, check)
		if errors.Is(err, ErrNotFound) && check != nil { // the lobby is gone, or the epoch moved
			if e, eerr := s.SharedEpoch(ctx, check.EpochKey); eerr == nil && e != check.Epoch {
				return ErrEpochMoved
			}
		}
		return err
	}
	if s.group != nil && !s.tx && len(hooks) == 0 && out == nil && check == nil && len(ms) > 0 && len(ms) <= maxRowsPerInsert {
		// SQLite, messages alone: one statement (insertIntoLobby), a transaction of its own
		// unless it meets an open group (no BEGIN, no COMMIT, no database/sql transaction).
		return s.group.runAlone(ctx, func(st Store, _ bool) error { return st.(*DB).insertIntoLobby(ctx, id, ms) })
	}
	return s.WithTx(ctx, func(st Store) error {
		tx := st.(*DB)
		if check != nil {
			if e, err := tx.SharedEpoch(ctx, check.EpochKey); err != nil {
				return err
			} else if e != check.Epoch {
				return ErrEpochMoved
			}
		}
		if s.d.name == "postgres" || len(ms) == 0 {
			if err := tx.HoldLobby(ctx, id); err != nil {
				return err
			}
			if err := tx.InsertLobbyMessages(ctx, ms); err != nil {
				return err
			}
		} else if err := tx.insertIntoLobby(ctx, id, ms); err != nil {
			return err
		}
		for _, h := range hooks {
			if err := tx.EnqueueWebhook(ctx, h); err != nil {
				return err
			}
		}
		if out == nil {
			return nil
		}
		ids := make([]uint64, len(out.Data))
		for i, d := range out.Data {
			var err error
			if ids[i], err = tx.AddOutbox(ctx, out.Key, d, out.At); err != nil {
				return err
			}
		}
		out.IDs = ids
		return nil
	})
}

// storeLobbyMessages is StoreLobbyMessages on PostgreSQL: the lobby's lookup and the inserts in
// one statement, the inserts made only when the lookup found the lobby. The lookup locks the
// lobby's row FOR KEY SHARE, which writes no new row version and no index entry (an UPDATE of
// the row did both) but still waits for a deletion of the lobby in progress on another node and
// then finds it gone, as the update did. Its rows' values are typed (the VALUES list of an
// INSERT ... SELECT takes no type from the columns).
//
// The outbox's ids are drawn from its sequence first and given to the rows by rank: the
// smallest to out.Data[0], and so on. So the ids grow in out.Data's order by construction, not
// by the order in which PostgreSQL happens to evaluate the sequence, which it does not promise;
// sorted, they are out.Data's ids in order. One row alone takes its id from the column's
// default, which spares the statement the sequence lookup, the sort and the ranking.
func (s *DB) storeLobbyMessages(ctx context.Context, id uint64, ms []*LobbyMessage, hooks []*WebhookDelivery, out, check *OutboxRows) error {
	if len(ms) > 0 && len(hooks) == 0 && out == nil && check == nil && (s.hold == nil || s.hold.last == nil) {
		return s.insertLockingLobby(ctx, id, ms)
	}
	var q strings.Builder
	args := make([]any, 0, 3+11*len(ms)+10*len(hooks)+2)
	q.WriteString(`WITH t AS (SELECT id FROM lobbies WHERE id=?`)
	args = append(args, id)
	if check != nil { // SharedEpoch's sum, in this statement's snapshot
		q.WriteString(` AND (SELECT n FROM cache_epoch WHERE id = 1) +
			COALESCE((SELECT last_id FROM order_locks WHERE key = ?::TEXT), 0) = ?::BIGINT`)
		args = append(args, check.EpochKey, int64(check.Epoch))
	}
	q.WriteString(` FOR KEY SHARE)`)
	if len(ms) > 0 {
		q.WriteString(`, m AS (INSERT INTO lobby_messages (` + lobbyMessageColumns + `, nonce) SELECT * FROM (VALUES `)
		for i, m := range ms {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString(pgLobbyMessageRow)
			args = lobbyMessageArgs(args, m, nil)
		}
		q.WriteString(`) AS v WHERE EXISTS (SELECT 1 FROM t))`)
	}
	if len(hooks) > 0 {
		q.WriteString(`, w AS (INSERT INTO webhook_deliveries (` + webhookColumns + `) SELECT * FROM (VALUES `)
		for i, d := range hooks {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString(`(?::BIGINT,?::BIGINT,?::TEXT,?::BYTEA,?::TEXT,?::BIGINT,?::BIGINT,?::TEXT,?::BIGINT,?::BIGINT)`)
			args = append(args, d.ID, d.AppID, d.EventType, d.Body, d.State, d.Attempts, ts(d.NextAttemptAt), d.LastError,
				ts(d.CreatedAt), ts(d.DeliveredAt))
		}
		q.WriteString(`) AS v WHERE EXISTS (SELECT 1 FROM t))`)
	}
	if out == nil {
		args = s.hold.recordFloor(&q, args) // on an order lock's connection, its floor
		q.WriteString(` SELECT COUNT(*) FROM t`)
		var found int
		if err := s.q.QueryRowContext(ctx, q.String(), args...).Scan(&found); err != nil {
			return err
		}
		if found == 0 {
			return ErrNotFound
		}
		return nil
	}
	// On an order lock's connection the rows carry its floor (pgHold.floor), which the commit
	// records so instead of in order_locks.
	last := s.hold.floor()
	if len(out.Data) == 1 { // its id drawn by the insert: no ranks to give
		q.WriteString(`, o AS (INSERT INTO outbox (key, data, created_at, last_id) SELECT ?::TEXT, ?::BYTEA, ?::BIGINT, ?::BIGINT
			WHERE EXISTS (SELECT 1 FROM t) RETURNING id) SELECT id FROM o`)
		args = append(args, out.Key, out.Data[0], ts(out.At), last)
	} else {
		q.WriteString(`, seq AS (SELECT nextval(pg_get_serial_sequence('outbox', 'id')) AS id FROM generate_series(1, ?::INT))`)
		q.WriteString(`, r AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM seq)`)
		q.WriteString(`, o AS (INSERT INTO outbox (id, key, data, created_at, last_id) SELECT r.id, ?::TEXT, v.d, ?::BIGINT, ?::BIGINT FROM (VALUES `)
		args = append(args, len(out.Data), out.Key, ts(out.At), last)
		for i, d := range out.Data {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString(`(?::BIGINT,?::BYTEA)`)
			args = append(args, i+1, d)
		}
		q.WriteString(`) AS v(n, d) JOIN r ON r.n = v.n WHERE EXISTS (SELECT 1 FROM t) RETURNING id) SELECT id FROM o ORDER BY id`)
	}
	rows, err := s.q.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return err
	}
	ids, err := collect(rows, func(row interface{ Scan(...any) error }) (*uint64, error) {
		var id int64
		err := row.Scan(&id)
		u := uint64(id)
		return &u, err
	})
	switch {
	case err != nil:
		return err
	case len(ids) == 0: // the lobby was not found, so nothing was inserted
		return ErrNotFound
	case len(ids) != len(out.Data):
		return fmt.Errorf("store: %d outbox rows stored of %d", len(ids), len(out.Data))
	}
	out.IDs = ids
	return nil
}

// insertLockingLobby is storeLobbyMessages for messages alone (no webhook deliveries, outbox
// rows, epoch or floor to record), as the single node stores them: one INSERT, whose rows are
// inserted only when the lookup of the lobby, locked FOR KEY SHARE, finds it; ErrNotFound when
// nothing was inserted. It spares the common table expressions, their scans and the count.
func (s *DB) insertLockingLobby(ctx context.Context, id uint64, ms []*LobbyMessage) error {
	if !s.tx && s.hold == nil && s.d.name == "postgres" {
		if n, ok, err := s.leanInsert(ctx, s.lockingText(len(ms)), id, ms); err != nil {
			return err
		} else if ok {
			return foundIf(n)
		}
	}
	q, args := lobbyMessagesInsert(lockingHead, pgLobbyMessageRow, ms, lockingTail, 1)
	res, err := s.q.ExecContext(ctx, q, append(args, int64(id))...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	return foundIf(n)
}

// The parts of insertLockingLobby's INSERT around its rows.
const lockingHead, lockingTail = `SELECT * FROM (VALUES `, `) AS v WHERE EXISTS (SELECT 1 FROM lobbies WHERE id=? FOR KEY SHARE)`

// lockingText is the text of insertLockingLobby's INSERT of rows messages, in the database's form.
func (s *DB) lockingText(rows int) string {
	return s.d.text(insertTexts.get(lockingHead, pgLobbyMessageRow, lockingTail, rows))
}

// foundIf is ErrNotFound when no row was inserted (n, the rows inserted, is 0), else nil.
func foundIf(n int64) error {
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// lobbyMessageRow is the VALUES row of a lobby message, lobbyMessageArgs its arguments;
// pgLobbyMessageRow is PostgreSQL's, typed, for a VALUES list that is not an INSERT's own.
const (
	lobbyMessageRow   = `(?,?,?,?,?,?,?,?,?,?,?)`
	pgLobbyMessageRow = `(?::BIGINT,?::BIGINT,?::BIGINT,?::BIGINT,?::TEXT,?::TEXT,?::TEXT,?::BIGINT,?::TEXT,?::BIGINT,?::TEXT)`
)

// lobbyMessageArgs appends m's arguments to args. When prev is not nil, args ends with prev's
// arguments, whose lobby, application and author m reuses where they are the same.
func lobbyMessageArgs(args []any, m, prev *LobbyMessage) []any {
	var nonce any // NULL unless enforced
	if m.Nonce != "" {
		nonce = m.Nonce
	}
	// The driver's own types (int64, not uint64 or int, which database/sql converts and boxes
	// again), an empty map's "{}" boxed once, and the rows' shared ids boxed once: allocations
	// per row are what a group commit pays per message.
	var was [4]uint64 // prev's lobby, application and author, at their places in a row
	if prev != nil {
		was = [4]uint64{1: prev.LobbyID, 2: prev.AppID, 3: prev.AuthorID}
	}
	box := func(v uint64, at int) any {
		if prev != nil && v == was[at] {
			return args[len(args)-11+at]
		}
		return int64(v)
	}
	return append(args, int64(m.ID), box(m.LobbyID, 1), box(m.AppID, 2), box(m.AuthorID, 3), m.Content,
		propsArg(m.Metadata), propsArg(m.ModerationMetadata), int64(m.Flags), m.AdditionalName, ts(m.CreatedAt), nonce)
}

// emptyProps is props of an empty map, as an argument.
var emptyProps any = "{}"

// propsArg is props(m) as an argument.
func propsArg(m map[string]string) any {
	if len(m) == 0 {
		return emptyProps
	}
	return props(m)
}

// maxRowsPerInsert bounds the rows of one multi-row INSERT (and so the texts pgx prepares).
const maxRowsPerInsert = 100

// insertIntoLobby inserts ms, messages of lobby id, on SQLite, with one statement per
// maxRowsPerInsert rows (sqliteLobbyInsert), the first of which inserts only when the lobby exists: ErrNotFound, with
// nothing inserted, when it does not. SQLite's one writer keeps the lobby there for the rest of
// the transaction, so that this is HoldLobby and InsertLobbyMessages in one statement fewer.
func (s *DB) insertIntoLobby(ctx context.Context, id uint64, ms []*LobbyMessage) error {
	for first := true; len(ms) > 0; first = false {
		chunk := ms[:min(len(ms), maxRowsPerInsert)]
		ms = ms[len(chunk):]
		q, args := sqliteLobbyInsert(id, chunk, first)
		res, err := s.q.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if first {
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return ErrNotFound
			}
		}
	}
	return nil
}

// HoldLobby fails with ErrNotFound unless lobby id exists, and in a transaction keeps it from
// being deleted until the commit: its row is read, not written. On SQLite, which has one
// writer, no deletion can come before the commit; on PostgreSQL the row's key-share lock holds
// one off, as in storeLobbyMessages. It is StoreLobbyMessages' check, a read with its own
// statement label, not an insert.
func (s *DB) HoldLobby(ctx context.Context, id uint64) error {
	lookup := `SELECT id FROM lobbies WHERE id=?`
	if s.d.name == "postgres" {
		lookup += ` FOR KEY SHARE`
	}
	var found uint64
	return notFound(s.q.QueryRowContext(ctx, lookup, id).Scan(&found))
}

// InsertLobbyMessages inserts ms with one statement per maxRowsPerInsert rows: on PostgreSQL a
// round trip each, on SQLite one statement's run (binding, cursor, the driver's bookkeeping) for
// a group commit's messages instead of one each.
func (s *DB) InsertLobbyMessages(ctx context.Context, ms []*LobbyMessage) error {
	if len(ms) == 1 {
		for _, m := range ms {
			if err := s.InsertLobbyMessage(ctx, m); err != nil {
				return err
			}
		}
		return nil
	}
	for len(ms) > 0 {
		chunk := ms[:min(len(ms), maxRowsPerInsert)]
		ms = ms[len(chunk):]
		q, args := lobbyMessagesInsert(`VALUES `, lobbyMessageRow, chunk, "", 0)
		if _, err := s.q.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// lobbyMessagesInsert returns the INSERT of ms, their rows (each row's text) after head and tail
// after them, and its arguments, with room for extra ones (tail's) at the end. The rows' lobby,
// application and author are boxed once for the rows that share them (a group commit's usually
// do), and the text is made once per head, row, tail and number of rows.
func lobbyMessagesInsert(head, row string, ms []*LobbyMessage, tail string, extra int) (string, []any) {
	args := make([]any, 0, 11*len(ms)+extra)
	for i, m := range ms {
		var prev *LobbyMessage
		if i > 0 {
			prev = ms[i-1]
		}
		args = lobbyMessageArgs(args, m, prev)
	}
	return insertTexts.get(head, row, tail, len(ms)), args
}

// insertTexts are the texts of lobbyMessagesInsert's statements.
var insertTexts = textCache{m: map[insertText]string{}}

// insertText identifies the text of an INSERT of rows lobby messages.
type insertText struct {
	head, row, tail string
	rows            int
}

// textCache holds statement texts, made once each.
type textCache struct {
	mu sync.Mutex
	m  map[insertText]string
}

// get returns the INSERT of rows lobby messages (row each) after head, with tail after them.
func (c *textCache) get(head, row, tail string, rows int) string {
	k := insertText{head: head, row: row, tail: tail, rows: rows}
	c.mu.Lock()
	defer c.mu.Unlock()
	if q, ok := c.m[k]; ok {
		return q
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO lobby_messages (` + lobbyMessageColumns + `, nonce) `)
	q.WriteString(head)
	for i := range rows {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(row)
	}
	q.WriteString(tail)
	c.m[k] = q.String()
	return c.m[k]
}

// latestNonceMessage reads the newest enforced nonce's time from the messages of a range of the
// primary key (the ids from since's), as many as were sent in the nonce window.
const latestNonceMessage = `SELECT MAX(created_at) FROM lobby_messages WHERE id >= ? AND created_at >= ? AND nonce IS NOT NULL`

func (s *DB) LatestNonceMessageAt(ctx context.Context, since time.Time) (time.Time, error) {
	var at sql.NullInt64
	if err := s.q.QueryRowContext(ctx, latestNonceMessage, snowflake.At(since), ts(since)).Scan(&at); err != nil {
		return time.Time{}, err
	}
	if !at.Valid {
		return time.Time{}, nil
	}
	return fromTS(at.Int64), nil
}

// nonceMessage finds an enforced nonce among the lobby's messages with the ids since the window's
// start (snowflakes, not older than their messages), through lobby_messages_lobby, with
// no index of its own for a commit to write.
const nonceMessage = `SELECT ` + lobbyMessageColumns + ` FROM lobby_messages
	WHERE lobby_id=? AND id>=? AND author_id=? AND nonce=? AND created_at>=? ORDER BY id LIMIT 1`

func (s *DB) FindLobbyMessageByNonce(ctx context.Context, lobbyID, authorID uint64, nonce string, since time.Time) (*LobbyMessage, error) {
	return scanLobbyMessage(s.q.QueryRowContext(ctx, nonceMessage, lobbyID, snowflake.At(since), authorID, nonce, ts(since)))
}

func (s *DB) GetLobbyMessage(ctx context.Context, lobbyID, id uint64) (*LobbyMessage, error) {
	return scanLobbyMessage(s.q.QueryRowContext(ctx, `SELECT `+lobbyMessageColumns+` FROM lobby_messages
		WHERE id=? AND lobby_id=?`, id, lobbyID))
}

func (s *DB) UpdateLobbyMessage(ctx context.Context, m *LobbyMessage) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE lobby_messages SET content=?, metadata=?, moderation_metadata=?,
		flags=?, additional_name=? WHERE id=?`,
		m.Content, props(m.Metadata), props(m.ModerationMetadata), m.Flags, m.AdditionalName, m.ID))
}

func (s *DB) ListLobbyMessages(ctx context.Context, lobbyID uint64, since time.Time, limit int) ([]LobbyMessage, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+lobbyMessageColumns+` FROM lobby_messages
		WHERE lobby_id=? AND created_at>=? ORDER BY id DESC LIMIT ?`, lobbyID, ts(since), limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanLobbyMessage)
}

func (s *DB) LastLobbyMessageID(ctx context.Context, lobbyID uint64) (uint64, error) {
	var id uint64
	err := s.q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM lobby_messages WHERE lobby_id=?`, lobbyID).Scan(&id)
	return id, err
}

func (s *DB) ListLobbyMessagesAfter(ctx context.Context, lobbyID, after uint64, since time.Time, limit int) ([]LobbyMessage, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT * FROM (SELECT `+lobbyMessageColumns+` FROM lobby_messages
		WHERE lobby_id=? AND id>? AND created_at>=? ORDER BY id LIMIT ?) AS page ORDER BY id DESC`, lobbyID, after, ts(since), limit)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanLobbyMessage)
}
