package store

import (
	"context"
	"database/sql"
	"time"
)

// PrimaryGuild is the guild whose tag a user shows (rule USR-2). Tag and Badge are a copy of the
// guild's tag, kept current by PutGuildTag; nil when the guild has none. Enabled is nil when the
// service cleared the identity (the guild's tag went), else the user's choice.
type PrimaryGuild struct {
	GuildID uint64
	Enabled *bool
	Tag     *string
	Badge   *string
}

// GuildTag is a guild's tag: 1 to 4 characters (rule LIM-5) and an optional badge hash.
type GuildTag struct {
	GuildID uint64
	Tag     string
	Badge   string // "" = none
}

// Connection is a user's connection to an account of another service (GET
// /users/@me/connections, rule CON-1).
type Connection struct {
	UserID       uint64
	Type         string // the service: "steam", "xbox", ...
	ID           string // the account's id at that service
	Name         string
	Verified     bool
	Visibility   int // 0 only the user, 1 everyone
	FriendSync   bool
	ShowActivity bool
	TwoWayLink   bool
	Revoked      bool
	CreatedAt    time.Time
}

// SKU is a premium offering of an application.
type SKU struct {
	ID        uint64
	AppID     uint64
	Type      int // the platform's SKU type: 5 subscription, 6 subscription group, ...
	Name      string
	Slug      string
	Flags     int
	CreatedAt time.Time
}

// Subscription is a user's subscription to an application's SKU. Its status follows from its
// times (rule ST-3): active until CurrentPeriodEnd, ending when canceled before then, inactive
// after it.
type Subscription struct {
	ID                 uint64
	SKUID              uint64
	AppID              uint64
	UserID             uint64
	CurrentPeriodStart time.Time
	CurrentPeriodEnd   time.Time
	CanceledAt         time.Time // zero when not canceled
	Country            string
	CreatedAt          time.Time
}

// UsersAppsStore keeps users' primary guilds and connections, guild tags, and applications' SKUs
// and subscriptions.
type UsersAppsStore interface {
	// SetPrimaryGuild sets the user's primary guild (nil clears it); ErrNotFound for no user.
	SetPrimaryGuild(ctx context.Context, userID uint64, pg *PrimaryGuild) error
	// GetGuildTag returns the guild's tag; ErrNotFound when it has none.
	GetGuildTag(ctx context.Context, guildID uint64) (*GuildTag, error)
	// PutGuildTag sets the guild's tag, or removes it when tag is nil, and brings the copies on
	// the users whose primary guild it is up to date (a removed tag clears their identity).
	PutGuildTag(ctx context.Context, guildID uint64, tag *GuildTag) error

	// PutConnection inserts or replaces a connection.
	PutConnection(ctx context.Context, c *Connection) error
	// ListConnections returns the user's connections, oldest first.
	ListConnections(ctx context.Context, userID uint64) ([]Connection, error)

	CreateSKU(ctx context.Context, s *SKU) error
	GetSKU(ctx context.Context, id uint64) (*SKU, error)
	CreateSubscription(ctx context.Context, s *Subscription) error
	// UpdateSubscription writes its period and cancellation; ErrNotFound for no subscription.
	UpdateSubscription(ctx context.Context, s *Subscription) error
	GetSubscription(ctx context.Context, id uint64) (*Subscription, error)
	// ListSubscriptions returns up to limit subscriptions of the SKU by id, of userID only
	// unless it is 0, with ids above after (ascending) or, when before is not 0, below it
	// (the newest first).
	ListSubscriptions(ctx context.Context, skuID, userID, before, after uint64, limit int) ([]Subscription, error)
}

// ---- primary guilds and guild tags

const primaryGuildColumns = `primary_guild_id, primary_guild_enabled, primary_guild_tag, primary_guild_badge`

// primaryGuildRow is what scanUser reads of primaryGuildColumns.
type primaryGuildRow struct {
	guildID    uint64
	enabled    sql.NullBool
	tag, badge sql.NullString
}

func (r *primaryGuildRow) value() *PrimaryGuild {
	if r.guildID == 0 {
		return nil
	}
	pg := &PrimaryGuild{GuildID: r.guildID}
	if r.enabled.Valid {
		pg.Enabled = &r.enabled.Bool
	}
	if r.tag.Valid {
		pg.Tag = &r.tag.String
	}
	if r.badge.Valid {
		pg.Badge = &r.badge.String
	}
	return pg
}

func (s *DB) SetPrimaryGuild(ctx context.Context, userID uint64, pg *PrimaryGuild) error {
	defer s.changed()()
	var guildID uint64
	var enabled, tag, badge any
	if pg != nil {
		guildID = pg.GuildID
		if pg.Enabled != nil {
			enabled = b2i(*pg.Enabled)
		}
		if pg.Tag != nil {
			tag = *pg.Tag
		}
		if pg.Badge != nil {
			badge = *pg.Badge
		}
	}
	return mustAffect(s.q.ExecContext(ctx, `UPDATE users SET primary_guild_id=?, primary_guild_enabled=?,
		primary_guild_tag=?, primary_guild_badge=? WHERE id=?`, guildID, enabled, tag, badge, userID))
}

func (s *DB) GetGuildTag(ctx context.Context, guildID uint64) (*GuildTag, error) {
	t := GuildTag{GuildID: guildID}
	var badge sql.NullString
	err := s.q.QueryRowContext(ctx, `SELECT tag, badge FROM guild_tags WHERE guild_id=?`, guildID).Scan(&t.Tag, &badge)
	if err != nil {
		return nil, notFound(err)
	}
	t.Badge = badge.String
	return &t, nil
}

func (s *DB) PutGuildTag(ctx context.Context, guildID uint64, tag *GuildTag) error {
	return s.WithTx(ctx, func(st Store) error {
		q := st.(*DB).q
		defer st.(*DB).changed()()
		if tag == nil {
			if _, err := q.ExecContext(ctx, `DELETE FROM guild_tags WHERE guild_id=?`, guildID); err != nil {
				return err
			}
			_, err := q.ExecContext(ctx, `UPDATE users SET primary_guild_enabled=NULL, primary_guild_tag=NULL,
				primary_guild_badge=NULL WHERE primary_guild_id=?`, guildID)
			return err
		}
		var badge any
		if tag.Badge != "" {
			badge = tag.Badge
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO guild_tags (guild_id, tag, badge) VALUES (?,?,?)
			ON CONFLICT (guild_id) DO UPDATE SET tag=excluded.tag, badge=excluded.badge`, guildID, tag.Tag, badge); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, `UPDATE users SET primary_guild_tag=?, primary_guild_badge=?
			WHERE primary_guild_id=? AND primary_guild_enabled IS NOT NULL`, tag.Tag, badge, guildID)
		return err
	})
}

// ---- connections

const connectionColumns = `user_id, type, id, name, verified, visibility, friend_sync, show_activity,
	two_way_link, revoked, created_at`

var upsertConnection = upsert(`connections`, connectionColumns, `user_id, type, id`)

func scanConnection(row interface{ Scan(...any) error }) (*Connection, error) {
	var c Connection
	var verified, friendSync, showActivity, twoWay, revoked int
	var created int64
	if err := row.Scan(&c.UserID, &c.Type, &c.ID, &c.Name, &verified, &c.Visibility, &friendSync, &showActivity,
		&twoWay, &revoked, &created); err != nil {
		return nil, notFound(err)
	}
	c.Verified, c.FriendSync, c.ShowActivity = verified != 0, friendSync != 0, showActivity != 0
	c.TwoWayLink, c.Revoked, c.CreatedAt = twoWay != 0, revoked != 0, fromTS(created)
	return &c, nil
}

func (s *DB) PutConnection(ctx context.Context, c *Connection) error {
	_, err := s.q.ExecContext(ctx, upsertConnection, c.UserID, c.Type, c.ID, c.Name, b2i(c.Verified), c.Visibility,
		b2i(c.FriendSync), b2i(c.ShowActivity), b2i(c.TwoWayLink), b2i(c.Revoked), ts(c.CreatedAt))
	return err
}

func (s *DB) ListConnections(ctx context.Context, userID uint64) ([]Connection, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+connectionColumns+` FROM connections WHERE user_id=?
		ORDER BY created_at, type, id`, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanConnection)
}

// ---- SKUs and subscriptions

const skuColumns = `id, app_id, type, name, slug, flags, created_at`

func scanSKU(row interface{ Scan(...any) error }) (*SKU, error) {
	var k SKU
	var created int64
	if err := row.Scan(&k.ID, &k.AppID, &k.Type, &k.Name, &k.Slug, &k.Flags, &created); err != nil {
		return nil, notFound(err)
	}
	k.CreatedAt = fromTS(created)
	return &k, nil
}

func (s *DB) CreateSKU(ctx context.Context, k *SKU) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO skus (`+skuColumns+`) VALUES (?,?,?,?,?,?,?)`,
		k.ID, k.AppID, k.Type, k.Name, k.Slug, k.Flags, ts(k.CreatedAt))
	return err
}

func (s *DB) GetSKU(ctx context.Context, id uint64) (*SKU, error) {
	return scanSKU(s.q.QueryRowContext(ctx, `SELECT `+skuColumns+` FROM skus WHERE id=?`, id))
}

const subscriptionColumns = `id, sku_id, app_id, user_id, current_period_start, current_period_end,
	canceled_at, country, created_at`

func scanSubscription(row interface{ Scan(...any) error }) (*Subscription, error) {
	var x Subscription
	var start, end, canceled, created int64
	if err := row.Scan(&x.ID, &x.SKUID, &x.AppID, &x.UserID, &start, &end, &canceled, &x.Country, &created); err != nil {
		return nil, notFound(err)
	}
	x.CurrentPeriodStart, x.CurrentPeriodEnd = fromTS(start), fromTS(end)
	x.CanceledAt, x.CreatedAt = fromTS(canceled), fromTS(created)
	return &x, nil
}

func (s *DB) CreateSubscription(ctx context.Context, x *Subscription) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO subscriptions (`+subscriptionColumns+`) VALUES (?,?,?,?,?,?,?,?,?)`,
		x.ID, x.SKUID, x.AppID, x.UserID, ts(x.CurrentPeriodStart), ts(x.CurrentPeriodEnd), ts(x.CanceledAt),
		x.Country, ts(x.CreatedAt))
	return err
}

func (s *DB) UpdateSubscription(ctx context.Context, x *Subscription) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE subscriptions SET current_period_start=?, current_period_end=?,
		canceled_at=? WHERE id=?`, ts(x.CurrentPeriodStart), ts(x.CurrentPeriodEnd), ts(x.CanceledAt), x.ID))
}

func (s *DB) GetSubscription(ctx context.Context, id uint64) (*Subscription, error) {
	return scanSubscription(s.q.QueryRowContext(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions WHERE id=?`, id))
}

func (s *DB) ListSubscriptions(ctx context.Context, skuID, userID, before, after uint64, limit int) ([]Subscription, error) {
	q := `SELECT ` + subscriptionColumns + ` FROM subscriptions WHERE sku_id=? AND (CAST(? AS BIGINT)=0 OR user_id=?)`
	args := []any{skuID, userID, userID}
	if before != 0 {
		q += ` AND id<? ORDER BY id DESC LIMIT ?`
		args = append(args, before, limit)
	} else {
		q += ` AND id>? ORDER BY id LIMIT ?`
		args = append(args, after, limit)
	}
	rows, err := s.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanSubscription)
}
