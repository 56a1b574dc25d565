package store

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// States of an InviteTargetJob (the values of the platform's job status codes).
const (
	InviteJobProcessing = 1
	InviteJobCompleted  = 2
	InviteJobFailed     = 3
)

// InviteTargetJob is the processing of an invite's latest target-users upload (rule INVT-2).
type InviteTargetJob struct {
	Code string
	// Seq counts the invite's uploads: a job whose Seq is not the invite's latest was replaced
	// by a later upload, and its end changes nothing.
	Seq    int64
	Status int // InviteJobProcessing, InviteJobCompleted or InviteJobFailed
	// UserIDs are the uploaded users while the job is processing; nil once it has ended.
	UserIDs     []uint64
	Total       int
	Processed   int
	Error       string // why a failed job failed
	CreatedAt   time.Time
	CompletedAt time.Time // when it ended; zero while processing
}

// GuildInviteStore keeps what bots manage of guild invites: the channel's invites, each
// invite's target users (the only users who may accept a targeted invite) and its target-users
// upload job (rules INVT-1, INVT-2, INVT-3).
type GuildInviteStore interface {
	// ListChannelInvites returns the channel's invites that are usable at now (a use left, not
	// expired), oldest first.
	ListChannelInvites(ctx context.Context, channelID uint64, now time.Time) ([]GuildInvite, error)
	// DeleteGuildInvite deletes the invite with its target users and upload job; ErrNotFound
	// when there is none.
	DeleteGuildInvite(ctx context.Context, code string) error

	// ListInviteTargets returns the invite's target users, ascending.
	ListInviteTargets(ctx context.Context, code string) ([]uint64, error)
	// CountInviteTargets returns how many target users the invite has.
	CountInviteTargets(ctx context.Context, code string) (int, error)
	// IsInviteTarget tells whether userID is one of the invite's target users.
	IsInviteTarget(ctx context.Context, code string, userID uint64) (bool, error)
	// AddInviteTargets adds users to the invite's target users (those there already stay) and
	// makes the invite Targeted; it returns how many it added. ErrNotFound for an unknown invite.
	AddInviteTargets(ctx context.Context, code string, ids []uint64) (int, error)
	// RemoveInviteTargets removes users from the invite's target users and returns how many it
	// removed; the invite stays Targeted.
	RemoveInviteTargets(ctx context.Context, code string, ids []uint64) (int, error)
	// ReplaceInviteTargets makes ids the invite's whole target list and the invite Targeted.
	// ErrNotFound for an unknown invite.
	ReplaceInviteTargets(ctx context.Context, code string, ids []uint64) error
	// MissingUsers returns those of ids that name no user, in the order given.
	MissingUsers(ctx context.Context, ids []uint64) ([]uint64, error)

	// StartInviteTargetJob stores a processing job of ids for the invite, created at now, in
	// place of the invite's previous job, and returns it.
	StartInviteTargetJob(ctx context.Context, code string, ids []uint64, now time.Time) (*InviteTargetJob, error)
	// GetInviteTargetJob returns the invite's latest job; ErrNotFound when it has had none.
	GetInviteTargetJob(ctx context.Context, code string) (*InviteTargetJob, error)
	// NextInviteTargetJob claims and returns the processing job created first that no other node
	// has claimed; ErrNotFound when none is. A claim (PostgreSQL) lasts the claim lease from the
	// store's wall clock, renewed by ProgressInviteTargetJob, so each job runs on one node.
	NextInviteTargetJob(ctx context.Context) (*InviteTargetJob, error)
	// ProgressInviteTargetJob records how many users job seq of the invite has processed;
	// ErrNotFound when that job is no longer the invite's latest or no longer processing.
	ProgressInviteTargetJob(ctx context.Context, code string, seq int64, processed int) error
	// EndInviteTargetJob ends job seq of the invite at at: completed when errMsg is "", else
	// failed with errMsg; its users are dropped. ErrNotFound when that job is no longer the
	// invite's latest or no longer processing.
	EndInviteTargetJob(ctx context.Context, code string, seq int64, processed int, errMsg string, at time.Time) error
}

// idsJSON is a list of ids as the JSON array the store keeps and passes to json_each.
func idsJSON(ids []uint64) string {
	b := make([]byte, 0, 2+len(ids)*20)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, id, 10)
	}
	return string(append(b, ']'))
}

// ListChannelInvites implements GuildInviteStore.
func (s *DB) ListChannelInvites(ctx context.Context, channelID uint64, now time.Time) ([]GuildInvite, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildInviteColumns+` FROM guild_invites WHERE channel_id=?
		AND (max_uses=0 OR uses<max_uses) AND (expires_at=0 OR expires_at>?) ORDER BY created_at, code`, channelID, ts(now))
	if err != nil {
		return nil, err
	}
	return collect(rows, scanGuildInvite)
}

func scanID(row interface{ Scan(...any) error }) (*uint64, error) {
	var id uint64
	return &id, row.Scan(&id)
}

// ListInviteTargets implements GuildInviteStore.
func (s *DB) ListInviteTargets(ctx context.Context, code string) ([]uint64, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT user_id FROM guild_invite_targets WHERE code=? ORDER BY user_id`, code)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanID)
}

// CountInviteTargets implements GuildInviteStore.
func (s *DB) CountInviteTargets(ctx context.Context, code string) (int, error) {
	var n int
	err := s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM guild_invite_targets WHERE code=?`, code).Scan(&n)
	return n, err
}

// IsInviteTarget implements GuildInviteStore.
func (s *DB) IsInviteTarget(ctx context.Context, code string, userID uint64) (bool, error) {
	var n int
	err := s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM guild_invite_targets WHERE code=? AND user_id=?`, code, userID).Scan(&n)
	return n > 0, err
}

// markTargeted makes the invite Targeted; ErrNotFound for an unknown invite.
func (s *DB) markTargeted(ctx context.Context, code string) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE guild_invites SET targeted=1 WHERE code=?`, code))
}

// addInviteTargets adds the ids of a JSON array to an invite's target users. (SQLite needs the
// WHERE to read ON CONFLICT as the INSERT's.)
const addInviteTargets = `INSERT INTO guild_invite_targets (code, user_id)
	SELECT ?, value FROM json_each(?) WHERE true ON CONFLICT DO NOTHING`

// AddInviteTargets implements GuildInviteStore.
func (s *DB) AddInviteTargets(ctx context.Context, code string, ids []uint64) (int, error) {
	added := 0
	err := s.WithTx(ctx, func(st Store) error {
		s := st.(*DB)
		if err := s.markTargeted(ctx, code); err != nil {
			return err
		}
		res, err := s.q.ExecContext(ctx, addInviteTargets, code, idsJSON(ids))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		added = int(n)
		return err
	})
	return added, err
}

// RemoveInviteTargets implements GuildInviteStore.
func (s *DB) RemoveInviteTargets(ctx context.Context, code string, ids []uint64) (int, error) {
	res, err := s.q.ExecContext(ctx, `DELETE FROM guild_invite_targets WHERE code=?
		AND user_id IN (SELECT value FROM json_each(?))`, code, idsJSON(ids))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ReplaceInviteTargets implements GuildInviteStore.
func (s *DB) ReplaceInviteTargets(ctx context.Context, code string, ids []uint64) error {
	return s.WithTx(ctx, func(st Store) error {
		s := st.(*DB)
		if err := s.markTargeted(ctx, code); err != nil {
			return err
		}
		if _, err := s.q.ExecContext(ctx, `DELETE FROM guild_invite_targets WHERE code=?`, code); err != nil {
			return err
		}
		_, err := s.q.ExecContext(ctx, addInviteTargets, code, idsJSON(ids))
		return err
	})
}

// MissingUsers implements GuildInviteStore.
func (s *DB) MissingUsers(ctx context.Context, ids []uint64) ([]uint64, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT j.value FROM json_each(?) j
		WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id=j.value) ORDER BY j.key`, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	return collect(rows, scanID)
}

// ---- target-users jobs

const inviteJobColumns = `code, seq, status, user_ids, total_users, processed_users, error_message, created_at, completed_at`

func scanInviteJob(row interface{ Scan(...any) error }) (*InviteTargetJob, error) {
	var j InviteTargetJob
	var ids string
	var created, completed int64
	if err := row.Scan(&j.Code, &j.Seq, &j.Status, &ids, &j.Total, &j.Processed, &j.Error, &created, &completed); err != nil {
		return nil, notFound(err)
	}
	if err := json.Unmarshal([]byte(ids), &j.UserIDs); err != nil {
		return nil, err
	}
	if len(j.UserIDs) == 0 {
		j.UserIDs = nil
	}
	j.CreatedAt, j.CompletedAt = fromTS(created), fromTS(completed)
	return &j, nil
}

// StartInviteTargetJob implements GuildInviteStore.
func (s *DB) StartInviteTargetJob(ctx context.Context, code string, ids []uint64, now time.Time) (*InviteTargetJob, error) {
	return scanInviteJob(s.q.QueryRowContext(ctx, `INSERT INTO guild_invite_jobs
		(code, seq, status, user_ids, total_users, processed_users, error_message, created_at, completed_at)
		VALUES (?, 1, ?, ?, ?, 0, '', ?, 0)
		ON CONFLICT (code) DO UPDATE SET seq=guild_invite_jobs.seq+1, status=excluded.status, user_ids=excluded.user_ids,
			total_users=excluded.total_users, processed_users=0, error_message='', created_at=excluded.created_at, completed_at=0,
			claimed_until=0
		RETURNING `+inviteJobColumns, code, InviteJobProcessing, idsJSON(ids), len(ids), ts(now)))
}

// GetInviteTargetJob implements GuildInviteStore.
func (s *DB) GetInviteTargetJob(ctx context.Context, code string) (*InviteTargetJob, error) {
	return scanInviteJob(s.q.QueryRowContext(ctx, `SELECT `+inviteJobColumns+` FROM guild_invite_jobs WHERE code=?`, code))
}

// NextInviteTargetJob implements GuildInviteStore.
func (s *DB) NextInviteTargetJob(ctx context.Context) (*InviteTargetJob, error) {
	now := s.opts.now()
	return scanInviteJob(s.q.QueryRowContext(ctx, `UPDATE guild_invite_jobs SET claimed_until=? WHERE code IN
		(SELECT code FROM guild_invite_jobs WHERE status=? AND claimed_until<=?
		ORDER BY created_at, code LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING `+inviteJobColumns, s.claimUntil(now), InviteJobProcessing, ts(now)))
}

// ProgressInviteTargetJob implements GuildInviteStore.
func (s *DB) ProgressInviteTargetJob(ctx context.Context, code string, seq int64, processed int) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE guild_invite_jobs SET processed_users=?, claimed_until=?
		WHERE code=? AND seq=? AND status=?`, processed, s.claimUntil(s.opts.now()), code, seq, InviteJobProcessing))
}

// EndInviteTargetJob implements GuildInviteStore.
func (s *DB) EndInviteTargetJob(ctx context.Context, code string, seq int64, processed int, errMsg string, at time.Time) error {
	status := InviteJobCompleted
	if errMsg != "" {
		status = InviteJobFailed
	}
	return mustAffect(s.q.ExecContext(ctx, `UPDATE guild_invite_jobs SET status=?, processed_users=?, error_message=?,
		completed_at=?, user_ids='[]', claimed_until=0 WHERE code=? AND seq=? AND status=?`,
		status, processed, errMsg, ts(at), code, seq, InviteJobProcessing))
}

func (s *DB) DeleteGuildInvite(ctx context.Context, code string) error {
	return s.WithTx(ctx, func(st Store) error {
		db := st.(*DB)
		if err := mustAffect(db.q.ExecContext(ctx, `DELETE FROM guild_invites WHERE code=?`, code)); err != nil {
			return err
		}
		if _, err := db.q.ExecContext(ctx, `DELETE FROM guild_invite_targets WHERE code=?`, code); err != nil {
			return err
		}
		_, err := db.q.ExecContext(ctx, `DELETE FROM guild_invite_jobs WHERE code=?`, code)
		return err
	})
}
