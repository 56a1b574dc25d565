package store

import (
	"context"
	"time"
)

// Relationship types, as the platform numbers them.
const (
	RelNone            = 0
	RelFriend          = 1
	RelBlocked         = 2
	RelPendingIncoming = 3
	RelPendingOutgoing = 4
	RelImplicit        = 5
	RelSuggestion      = 6
)

// Relationship is one side of a relationship between two users: what PeerID is to UserID. AppID
// 0 is the platform-account relationship; another AppID is a game relationship in that
// application. A friendship has two rows (Friend, Friend); a request has PendingOutgoing on the
// sender's side and PendingIncoming on the recipient's; a block has only the blocker's row.
type Relationship struct {
	UserID    uint64
	PeerID    uint64
	AppID     uint64
	Type      int
	Spam      bool // an incoming request believed to be spam (rule REL-1)
	CreatedAt time.Time
}

// Custom status privacy settings of a user (rule GW-5).
const (
	PrivacyEveryone               = 0
	PrivacyFriendsOnly            = 1
	PrivacyFriendsAndSmallServers = 2
)

// RelationshipStore keeps relationships and the user settings that govern what others see.
type RelationshipStore interface {
	// GetRelationship returns userID's relationship to peerID in appID (0 = platform); ErrNotFound
	// when there is none.
	GetRelationship(ctx context.Context, userID, peerID, appID uint64) (*Relationship, error)
	// PutRelationship inserts or replaces one side.
	PutRelationship(ctx context.Context, r *Relationship) error
	// DeleteRelationship removes one side; no error when there was none.
	DeleteRelationship(ctx context.Context, userID, peerID, appID uint64) error
	// ListRelationships returns the user's platform relationships and, when appID is not 0, the
	// game relationships in appID, by peer id then app id.
	ListRelationships(ctx context.Context, userID, appID uint64) ([]Relationship, error)
	// ListRelated returns every row (any app) whose peer is userID: who has userID as friend,
	// pending or blocked.
	ListRelated(ctx context.Context, userID uint64) ([]Relationship, error)
	// CountOutgoingSince counts the user's pending outgoing requests (any app) made after t.
	CountOutgoingSince(ctx context.Context, userID uint64, t time.Time) (int, error)
	// CustomStatusPrivacy returns the user's privacy setting (PrivacyEveryone when never set).
	CustomStatusPrivacy(ctx context.Context, userID uint64) (int, error)
	// SetCustomStatusPrivacy stores the user's privacy setting.
	SetCustomStatusPrivacy(ctx context.Context, userID uint64, privacy int) error
}

const relColumns = `user_id, peer_id, app_id, type, spam, created_at`

var upsertRelationship = upsert(`relationships`, relColumns, `user_id, app_id, peer_id`)

func scanRel(row interface{ Scan(...any) error }) (*Relationship, error) {
	var r Relationship
	var spam int
	var created int64
	if err := row.Scan(&r.UserID, &r.PeerID, &r.AppID, &r.Type, &spam, &created); err != nil {
		return nil, notFound(err)
	}
	r.Spam, r.CreatedAt = spam != 0, fromTS(created)
	return &r, nil
}

func (s *DB) GetRelationship(ctx context.Context, userID, peerID, appID uint64) (*Relationship, error) {
	return scanRel(s.q.QueryRowContext(ctx, `SELECT `+relColumns+` FROM relationships
		WHERE user_id=? AND peer_id=? AND app_id=?`, userID, peerID, appID))
}

func (s *DB) PutRelationship(ctx context.Context, r *Relationship) error {
	_, err := s.q.ExecContext(ctx, upsertRelationship,
		r.UserID, r.PeerID, r.AppID, r.Type, b2i(r.Spam), ts(r.CreatedAt))
	return err
}

func (s *DB) DeleteRelationship(ctx context.Context, userID, peerID, appID uint64) error {
	_, err := s.q.ExecContext(ctx, `DELETE FROM relationships WHERE user_id=? AND peer_id=? AND app_id=?`,
		userID, peerID, appID)
	return err
}

func (s *DB) ListRelationships(ctx context.Context, userID, appID uint64) ([]Relationship, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+relColumns+` FROM relationships
		WHERE user_id=? AND (app_id=0 OR app_id=?) ORDER BY peer_id, app_id`, userID, appID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanRel)
}

func (s *DB) ListRelated(ctx context.Context, userID uint64) ([]Relationship, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+relColumns+` FROM relationships WHERE peer_id=?
		ORDER BY user_id, app_id`, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanRel)
}

func (s *DB) CountOutgoingSince(ctx context.Context, userID uint64, t time.Time) (int, error) {
	var n int
	err := s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM relationships WHERE user_id=? AND type=? AND created_at>?`,
		userID, RelPendingOutgoing, ts(t)).Scan(&n)
	return n, err
}

func (s *DB) CustomStatusPrivacy(ctx context.Context, userID uint64) (int, error) {
	var p int
	err := s.q.QueryRowContext(ctx, `SELECT custom_status_privacy FROM user_settings WHERE user_id=?`, userID).Scan(&p)
	if notFound(err) == ErrNotFound {
		return PrivacyEveryone, nil
	}
	return p, err
}

func (s *DB) SetCustomStatusPrivacy(ctx context.Context, userID uint64, privacy int) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO user_settings (user_id, custom_status_privacy) VALUES (?,?)
		ON CONFLICT(user_id) DO UPDATE SET custom_status_privacy=excluded.custom_status_privacy`, userID, privacy)
	return err
}
