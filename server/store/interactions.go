package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// PendingInteraction is an interaction awaiting, or past, its initial response (package
// interactions). It is kept in the store so that any node can take the bot's callback.
type PendingInteraction struct {
	ID, AppID, BotUserID, UserID, ChannelID uint64
	Kind                                    int
	TokenHash                               []byte // SHA-256 of the interaction token
	Meta                                    string // the interaction_metadata of its message, JSON
	CreatedAt                               time.Time
	Answered                                bool
}

// OpenModal is a modal shown to a user in answer to the interaction ID, until submitted.
type OpenModal struct {
	ID, AppID, UserID, GuildID, ChannelID uint64
	CustomID                              string
	Fields                                string // what a submission is checked against, JSON
	OpenedAt                              time.Time
}

// InteractionStore keeps pending interactions and open modals.
type InteractionStore interface {
	PutInteraction(ctx context.Context, p *PendingInteraction) error
	GetInteraction(ctx context.Context, id uint64) (*PendingInteraction, error)
	// AnswerInteraction marks the interaction answered in one conditional statement:
	// ErrConflict when it was answered already (maybe on another node), ErrNotFound when there
	// is none.
	AnswerInteraction(ctx context.Context, id uint64) error
	PutModal(ctx context.Context, m *OpenModal) error
	GetModal(ctx context.Context, id uint64) (*OpenModal, error)
	// DeleteModal closes the modal: ErrNotFound when it is closed already (submitted on
	// another node meanwhile).
	DeleteModal(ctx context.Context, id uint64) error
	// SweepInteractions deletes the interactions made and the modals opened at or before before.
	SweepInteractions(ctx context.Context, before time.Time) error
}

// PutInteraction implements InteractionStore.
func (s *DB) PutInteraction(ctx context.Context, p *PendingInteraction) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO pending_interactions (id, app_id, bot_user_id, user_id, channel_id, kind,
		token_hash, meta, created_at, answered) VALUES (?,?,?,?,?,?,?,?,?,?)`, p.ID, p.AppID, p.BotUserID, p.UserID,
		p.ChannelID, p.Kind, p.TokenHash, p.Meta, ts(p.CreatedAt), b2i(p.Answered))
	if err != nil {
		return fmt.Errorf("store: put interaction: %w", err)
	}
	return nil
}

// GetInteraction implements InteractionStore.
func (s *DB) GetInteraction(ctx context.Context, id uint64) (*PendingInteraction, error) {
	var p PendingInteraction
	var created int64
	var answered int
	err := s.q.QueryRowContext(ctx, `SELECT id, app_id, bot_user_id, user_id, channel_id, kind, token_hash, meta,
		created_at, answered FROM pending_interactions WHERE id=?`, id).Scan(&p.ID, &p.AppID, &p.BotUserID, &p.UserID,
		&p.ChannelID, &p.Kind, &p.TokenHash, &p.Meta, &created, &answered)
	if err != nil {
		return nil, notFound(err)
	}
	p.CreatedAt, p.Answered = fromTS(created), answered != 0
	return &p, nil
}

// AnswerInteraction implements InteractionStore.
func (s *DB) AnswerInteraction(ctx context.Context, id uint64) error {
	err := mustAffect(s.q.ExecContext(ctx, `UPDATE pending_interactions SET answered=1 WHERE id=? AND answered=0`, id))
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	if _, err := s.GetInteraction(ctx, id); err != nil {
		return err
	}
	return ErrConflict
}

// PutModal implements InteractionStore.
func (s *DB) PutModal(ctx context.Context, m *OpenModal) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO open_modals (id, app_id, user_id, guild_id, channel_id, custom_id, fields,
		opened_at) VALUES (?,?,?,?,?,?,?,?)`, m.ID, m.AppID, m.UserID, m.GuildID, m.ChannelID, m.CustomID, m.Fields, ts(m.OpenedAt))
	if err != nil {
		return fmt.Errorf("store: put modal: %w", err)
	}
	return nil
}

// GetModal implements InteractionStore.
func (s *DB) GetModal(ctx context.Context, id uint64) (*OpenModal, error) {
	var m OpenModal
	var opened int64
	err := s.q.QueryRowContext(ctx, `SELECT id, app_id, user_id, guild_id, channel_id, custom_id, fields, opened_at
		FROM open_modals WHERE id=?`, id).Scan(&m.ID, &m.AppID, &m.UserID, &m.GuildID, &m.ChannelID, &m.CustomID, &m.Fields, &opened)
	if err != nil {
		return nil, notFound(err)
	}
	m.OpenedAt = fromTS(opened)
	return &m, nil
}

// DeleteModal implements InteractionStore.
func (s *DB) DeleteModal(ctx context.Context, id uint64) error {
	return mustAffect(s.q.ExecContext(ctx, `DELETE FROM open_modals WHERE id=?`, id))
}

// SweepInteractions implements InteractionStore.
func (s *DB) SweepInteractions(ctx context.Context, before time.Time) error {
	if _, err := s.q.ExecContext(ctx, `DELETE FROM pending_interactions WHERE created_at <= ?`, ts(before)); err != nil {
		return fmt.Errorf("store: sweep interactions: %w", err)
	}
	if _, err := s.q.ExecContext(ctx, `DELETE FROM open_modals WHERE opened_at <= ?`, ts(before)); err != nil {
		return fmt.Errorf("store: sweep modals: %w", err)
	}
	return nil
}
