package store

import (
	"context"
	"database/sql"
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
	// FocusType is the type of an autocomplete interaction's focused option (0 for others).
	FocusType int
	// Deferred is set by a deferred response (type 5) until its message comes (TakeDeferral);
	// DeferFlags are the flags that response gave.
	Deferred   bool
	DeferFlags int
	// OriginalID is the id of the original response's message, 0 while there is none.
	OriginalID uint64
}

// InteractionMessage is a message of an interaction: its original response or a follow-up.
type InteractionMessage struct {
	InteractionID, MessageID uint64
	// Ephemeral is an ephemeral message (flags 64) whole, as JSON: it is kept nowhere else.
	// Empty for a message of the channel.
	Ephemeral string
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
	// InteractionByToken is the interaction of the token whose hash is tokenHash (the interaction
	// webhook routes): ErrNotFound when there is none.
	InteractionByToken(ctx context.Context, tokenHash []byte) (*PendingInteraction, error)
	// DeferInteraction records a deferred response with its flags.
	DeferInteraction(ctx context.Context, id uint64, flags int) error
	// TakeDeferral ends the interaction's deferral in one conditional statement, for the one
	// message that completes it: ErrConflict when it is not (or no longer) deferred, ErrNotFound
	// when there is no such interaction.
	TakeDeferral(ctx context.Context, id uint64) error
	// SetInteractionOriginal sets the id of the original response's message (0: none).
	SetInteractionOriginal(ctx context.Context, id, messageID uint64) error
	PutInteractionMessage(ctx context.Context, m *InteractionMessage) error
	// GetInteractionMessage is the interaction's message: ErrNotFound when it is not one.
	GetInteractionMessage(ctx context.Context, interactionID, messageID uint64) (*InteractionMessage, error)
	// SetInteractionEphemeral replaces an ephemeral message: ErrNotFound when there is none.
	SetInteractionEphemeral(ctx context.Context, interactionID, messageID uint64, ephemeral string) error
	// DeleteInteractionMessage forgets the interaction's message: ErrNotFound when it is not one.
	DeleteInteractionMessage(ctx context.Context, interactionID, messageID uint64) error
	PutModal(ctx context.Context, m *OpenModal) error
	GetModal(ctx context.Context, id uint64) (*OpenModal, error)
	// DeleteModal closes the modal: ErrNotFound when it is closed already (submitted on
	// another node meanwhile).
	DeleteModal(ctx context.Context, id uint64) error
	// SweepInteractions deletes the interactions made (with their messages) and the modals opened
	// at or before before.
	SweepInteractions(ctx context.Context, before time.Time) error
}

// PutInteraction implements InteractionStore.
func (s *DB) PutInteraction(ctx context.Context, p *PendingInteraction) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO pending_interactions (id, app_id, bot_user_id, user_id, channel_id, kind,
		token_hash, meta, created_at, answered, focus_type, deferred, defer_flags, original_id)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, p.ID, p.AppID, p.BotUserID, p.UserID, p.ChannelID, p.Kind, p.TokenHash,
		p.Meta, ts(p.CreatedAt), b2i(p.Answered), p.FocusType, b2i(p.Deferred), p.DeferFlags, p.OriginalID)
	if err != nil {
		return fmt.Errorf("store: put interaction: %w", err)
	}
	return nil
}

// interactionColumns are the columns scanInteraction reads.
const interactionColumns = `id, app_id, bot_user_id, user_id, channel_id, kind, token_hash, meta, created_at, answered,
	focus_type, deferred, defer_flags, original_id`

// scanInteraction reads a row of interactionColumns.
func scanInteraction(row *sql.Row) (*PendingInteraction, error) {
	var p PendingInteraction
	var created int64
	var answered, deferred int
	err := row.Scan(&p.ID, &p.AppID, &p.BotUserID, &p.UserID, &p.ChannelID, &p.Kind, &p.TokenHash, &p.Meta, &created,
		&answered, &p.FocusType, &deferred, &p.DeferFlags, &p.OriginalID)
	if err != nil {
		return nil, notFound(err)
	}
	p.CreatedAt, p.Answered, p.Deferred = fromTS(created), answered != 0, deferred != 0
	return &p, nil
}

// GetInteraction implements InteractionStore.
func (s *DB) GetInteraction(ctx context.Context, id uint64) (*PendingInteraction, error) {
	return scanInteraction(s.q.QueryRowContext(ctx, `SELECT `+interactionColumns+` FROM pending_interactions WHERE id=?`, id))
}

// InteractionByToken implements InteractionStore.
func (s *DB) InteractionByToken(ctx context.Context, tokenHash []byte) (*PendingInteraction, error) {
	return scanInteraction(s.q.QueryRowContext(ctx, `SELECT `+interactionColumns+` FROM pending_interactions
		WHERE token_hash=?`, tokenHash))
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

// DeferInteraction implements InteractionStore.
func (s *DB) DeferInteraction(ctx context.Context, id uint64, flags int) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE pending_interactions SET deferred=1, defer_flags=? WHERE id=?`, flags, id))
}

// TakeDeferral implements InteractionStore.
func (s *DB) TakeDeferral(ctx context.Context, id uint64) error {
	err := mustAffect(s.q.ExecContext(ctx, `UPDATE pending_interactions SET deferred=0 WHERE id=? AND deferred=1`, id))
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	if _, err := s.GetInteraction(ctx, id); err != nil {
		return err
	}
	return ErrConflict
}

// SetInteractionOriginal implements InteractionStore.
func (s *DB) SetInteractionOriginal(ctx context.Context, id, messageID uint64) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE pending_interactions SET original_id=? WHERE id=?`, messageID, id))
}

// PutInteractionMessage implements InteractionStore.
func (s *DB) PutInteractionMessage(ctx context.Context, m *InteractionMessage) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO interaction_messages (interaction_id, message_id, ephemeral) VALUES (?,?,?)`,
		m.InteractionID, m.MessageID, m.Ephemeral)
	if err != nil {
		return fmt.Errorf("store: put interaction message: %w", err)
	}
	return nil
}

// GetInteractionMessage implements InteractionStore.
func (s *DB) GetInteractionMessage(ctx context.Context, interactionID, messageID uint64) (*InteractionMessage, error) {
	m := InteractionMessage{InteractionID: interactionID, MessageID: messageID}
	err := s.q.QueryRowContext(ctx, `SELECT ephemeral FROM interaction_messages WHERE interaction_id=? AND message_id=?`,
		interactionID, messageID).Scan(&m.Ephemeral)
	if err != nil {
		return nil, notFound(err)
	}
	return &m, nil
}

// SetInteractionEphemeral implements InteractionStore.
func (s *DB) SetInteractionEphemeral(ctx context.Context, interactionID, messageID uint64, ephemeral string) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE interaction_messages SET ephemeral=? WHERE interaction_id=? AND message_id=?
		AND ephemeral <> ''`, ephemeral, interactionID, messageID))
}

// DeleteInteractionMessage implements InteractionStore.
func (s *DB) DeleteInteractionMessage(ctx context.Context, interactionID, messageID uint64) error {
	return mustAffect(s.q.ExecContext(ctx, `DELETE FROM interaction_messages WHERE interaction_id=? AND message_id=?`,
		interactionID, messageID))
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
	if _, err := s.q.ExecContext(ctx, `DELETE FROM interaction_messages
		WHERE interaction_id NOT IN (SELECT id FROM pending_interactions)`); err != nil {
		return fmt.Errorf("store: sweep interaction messages: %w", err)
	}
	if _, err := s.q.ExecContext(ctx, `DELETE FROM open_modals WHERE opened_at <= ?`, ts(before)); err != nil {
		return fmt.Errorf("store: sweep modals: %w", err)
	}
	return nil
}
