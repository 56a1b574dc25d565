package store

import (
	"context"
	"errors"
)

// ChannelSettings are the editable settings of a guild channel beyond those of GuildChannel
// (Modify Channel, rule VER-1): its slowmode interval in seconds (0: off) and its topic ("":
// none). A channel never modified has the zero settings.
type ChannelSettings struct {
	ChannelID        uint64
	RateLimitPerUser int
	Topic            string
}

// ChannelSettingsStore keeps the settings of guild channels.
type ChannelSettingsStore interface {
	// GetChannelSettings returns the channel's settings, the zero settings (with ChannelID) when
	// it has none stored.
	GetChannelSettings(ctx context.Context, channelID uint64) (*ChannelSettings, error)
	// PutChannelSettings inserts or replaces the channel's settings.
	PutChannelSettings(ctx context.Context, c *ChannelSettings) error
	// RenameGuildChannel sets the channel's name; ErrNotFound when there is no such channel.
	RenameGuildChannel(ctx context.Context, channelID uint64, name string) error
}

func (s *DB) GetChannelSettings(ctx context.Context, channelID uint64) (*ChannelSettings, error) {
	c := ChannelSettings{ChannelID: channelID}
	err := notFound(s.q.QueryRowContext(ctx, `SELECT rate_limit_per_user, topic FROM guild_channel_settings WHERE channel_id=?`,
		channelID).Scan(&c.RateLimitPerUser, &c.Topic))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return &c, nil
}

var upsertChannelSettings = upsert(`guild_channel_settings`, `channel_id, rate_limit_per_user, topic`, `channel_id`)

func (s *DB) PutChannelSettings(ctx context.Context, c *ChannelSettings) error {
	_, err := s.q.ExecContext(ctx, upsertChannelSettings, c.ChannelID, c.RateLimitPerUser, c.Topic)
	return err
}

// RenameGuildChannel sets the channel's name; ErrNotFound when there is no such channel.
func (s *DB) RenameGuildChannel(ctx context.Context, channelID uint64, name string) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE guild_channels SET name=? WHERE id=?`, name, channelID))
}
