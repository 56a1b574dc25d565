package store

import (
	"context"
	"encoding/json"
	"time"
)

// Guild is a community with members and channels (package guilds).
type Guild struct {
	ID        uint64
	Name      string
	OwnerID   uint64
	CreatedAt time.Time
}

// GuildMember is a user's membership of a guild. ManageChannels is the service's one guild
// permission beyond membership: it lets the member link the guild's channels to lobbies (the
// owner always may).
type GuildMember struct {
	GuildID        uint64
	UserID         uint64
	ManageChannels bool
	JoinedAt       time.Time
	// Nick, Avatar, Banner and Bio are the member's guild profile ("" when unset); Avatar and
	// Banner are image hashes (rule MEM-1).
	Nick, Avatar, Banner, Bio string
	// Temporary marks a member who joined through a temporary invite.
	Temporary bool
}

// GuildChannel is a channel of a guild. ParentID is its category's id, 0 when none (rule GCH-1).
type GuildChannel struct {
	ID        uint64
	GuildID   uint64
	Name      string
	Type      int // the platform's channel type: 0 text, 2 voice, 4 category, ...
	Position  int
	ParentID  uint64
	CreatedAt time.Time
}

// GuildInvite is an invite to a guild's channel. Lobby channel invites (rule LOB-5) have MaxUses
// 1, expire one hour after they are made, name the lobby they came from and the one user they
// were made for.
type GuildInvite struct {
	Code      string
	GuildID   uint64
	ChannelID uint64
	InviterID uint64
	LobbyID   uint64 // 0 unless made for a lobby's linked channel
	// Targeted: only the invite's target users (GuildInviteStore) may accept it; otherwise
	// anyone holding the code may.
	Targeted bool
	// TargetUserIDs are written by InsertGuildInvite as the invite's target users (a non-empty
	// list makes it Targeted); GetGuildInvite leaves it nil: the list is read with
	// ListInviteTargets and IsInviteTarget.
	TargetUserIDs []uint64
	// RoleIDs are the roles given to the user who accepts the invite (rule INVT-1).
	RoleIDs   []uint64
	Temporary bool
	MaxUses   int // 0 is unlimited
	Uses      int
	ExpiresAt time.Time // zero: never
	CreatedAt time.Time
}

// LobbyLink links a lobby to a guild channel: each lobby has at most one linked channel and each
// channel at most one lobby.
type LobbyLink struct {
	LobbyID   uint64
	ChannelID uint64
	AppID     uint64
	LinkedBy  uint64
	LinkedAt  time.Time
}

// GuildStore keeps guilds, their members, channels and invites, and lobbies' linked channels.
type GuildStore interface {
	CreateGuild(ctx context.Context, g *Guild) error
	GetGuild(ctx context.Context, id uint64) (*Guild, error)
	// ListUserGuilds returns the guilds user is a member of, by id.
	ListUserGuilds(ctx context.Context, userID uint64) ([]Guild, error)

	// PutGuildMember inserts or replaces a membership.
	PutGuildMember(ctx context.Context, m *GuildMember) error
	GetGuildMember(ctx context.Context, guildID, userID uint64) (*GuildMember, error)
	// CountReachableUsers returns how many distinct users other than userID are members of the
	// guilds userID is a member of: the users a bot reaches (rule LIM-4).
	CountReachableUsers(ctx context.Context, userID uint64) (int, error)

	CreateGuildChannel(ctx context.Context, c *GuildChannel) error
	GetGuildChannel(ctx context.Context, id uint64) (*GuildChannel, error)
	// ListGuildChannels returns the guild's channels by position, then id.
	ListGuildChannels(ctx context.Context, guildID uint64) ([]GuildChannel, error)

	// InsertGuildInvite inserts i; ErrConflict when its code is taken.
	InsertGuildInvite(ctx context.Context, i *GuildInvite) error
	GetGuildInvite(ctx context.Context, code string) (*GuildInvite, error)
	// UseGuildInvite counts one use of the invite if it has uses left (MaxUses 0: always) and
	// has not expired at now (a zero ExpiresAt never does); ErrNotFound otherwise.
	UseGuildInvite(ctx context.Context, code string, now time.Time) error

	// PutLobbyLink links a lobby to a channel, replacing the lobby's link; ErrConflict when the
	// channel is linked to another lobby.
	PutLobbyLink(ctx context.Context, l *LobbyLink) error
	GetLobbyLink(ctx context.Context, lobbyID uint64) (*LobbyLink, error)
	GetChannelLink(ctx context.Context, channelID uint64) (*LobbyLink, error)
	// DeleteLobbyLink removes the lobby's link; ErrNotFound when it had none.
	DeleteLobbyLink(ctx context.Context, lobbyID uint64) error
}

// ---- guilds

const guildColumns = `id, name, owner_id, created_at`

func scanGuild(row interface{ Scan(...any) error }) (*Guild, error) {
	var g Guild
	var created int64
	if err := row.Scan(&g.ID, &g.Name, &g.OwnerID, &created); err != nil {
		return nil, notFound(err)
	}
	g.CreatedAt = fromTS(created)
	return &g, nil
}

func (s *DB) CreateGuild(ctx context.Context, g *Guild) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO guilds (`+guildColumns+`) VALUES (?,?,?,?)`,
		g.ID, g.Name, g.OwnerID, ts(g.CreatedAt))
	return err
}

func (s *DB) GetGuild(ctx context.Context, id uint64) (*Guild, error) {
	return scanGuild(s.q.QueryRowContext(ctx, `SELECT `+guildColumns+` FROM guilds WHERE id=?`, id))
}

func (s *DB) ListUserGuilds(ctx context.Context, userID uint64) ([]Guild, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildColumns+` FROM guilds
		WHERE id IN (SELECT guild_id FROM guild_members WHERE user_id=?) ORDER BY id`, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanGuild)
}

// ---- guild members

func (s *DB) PutGuildMember(ctx context.Context, m *GuildMember) error {
	_, err := s.q.ExecContext(ctx, upsertGuildMember, m.GuildID, m.UserID, b2i(m.ManageChannels), ts(m.JoinedAt), m.Nick, m.Avatar, m.Banner, m.Bio,
		b2i(m.Temporary))
	return err
}

func (s *DB) CountReachableUsers(ctx context.Context, userID uint64) (int, error) {
	var n int
	err := s.q.QueryRowContext(ctx, `SELECT COUNT(DISTINCT m.user_id) FROM guild_members b
		JOIN guild_members m ON m.guild_id=b.guild_id WHERE b.user_id=? AND m.user_id<>?`, userID, userID).Scan(&n)
	return n, err
}

const guildMemberColumns = `guild_id, user_id, manage_channels, joined_at, nick, avatar, banner, bio, temporary`

var upsertGuildMember = upsert(`guild_members`, guildMemberColumns, `guild_id, user_id`)

func scanGuildMember(row interface{ Scan(...any) error }) (*GuildMember, error) {
	var m GuildMember
	var manage, temporary int
	var joined int64
	if err := row.Scan(&m.GuildID, &m.UserID, &manage, &joined, &m.Nick, &m.Avatar, &m.Banner, &m.Bio, &temporary); err != nil {
		return nil, notFound(err)
	}
	m.ManageChannels, m.JoinedAt, m.Temporary = manage != 0, fromTS(joined), temporary != 0
	return &m, nil
}

func (s *DB) GetGuildMember(ctx context.Context, guildID, userID uint64) (*GuildMember, error) {
	return scanGuildMember(s.q.QueryRowContext(ctx, `SELECT `+guildMemberColumns+` FROM guild_members
		WHERE guild_id=? AND user_id=?`, guildID, userID))
}

// ---- guild channels

const guildChannelColumns = `id, guild_id, name, type, position, parent_id, created_at`

func scanGuildChannel(row interface{ Scan(...any) error }) (*GuildChannel, error) {
	var c GuildChannel
	var created int64
	if err := row.Scan(&c.ID, &c.GuildID, &c.Name, &c.Type, &c.Position, &c.ParentID, &created); err != nil {
		return nil, notFound(err)
	}
	c.CreatedAt = fromTS(created)
	return &c, nil
}

func (s *DB) CreateGuildChannel(ctx context.Context, c *GuildChannel) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO guild_channels (`+guildChannelColumns+`) VALUES (?,?,?,?,?,?,?)`,
		c.ID, c.GuildID, c.Name, c.Type, c.Position, c.ParentID, ts(c.CreatedAt))
	return err
}

func (s *DB) GetGuildChannel(ctx context.Context, id uint64) (*GuildChannel, error) {
	return scanGuildChannel(s.q.QueryRowContext(ctx, `SELECT `+guildChannelColumns+` FROM guild_channels WHERE id=?`, id))
}

func (s *DB) ListGuildChannels(ctx context.Context, guildID uint64) ([]GuildChannel, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT `+guildChannelColumns+` FROM guild_channels WHERE guild_id=?
		ORDER BY position, id`, guildID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanGuildChannel)
}

// ---- guild invites

const guildInviteColumns = `code, guild_id, channel_id, inviter_id, lobby_id, targeted, role_ids, temporary, max_uses, uses,
	expires_at, created_at`

func (s *DB) InsertGuildInvite(ctx context.Context, i *GuildInvite) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO guild_invites (`+guildInviteColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		i.Code, i.GuildID, i.ChannelID, i.InviterID, i.LobbyID, b2i(i.Targeted || len(i.TargetUserIDs) > 0), idsJSON(i.RoleIDs),
		b2i(i.Temporary), i.MaxUses, i.Uses, ts(i.ExpiresAt), ts(i.CreatedAt))
	if s.isUnique(err) {
		return ErrConflict
	}
	if err != nil || len(i.TargetUserIDs) == 0 {
		return err
	}
	_, err = s.AddInviteTargets(ctx, i.Code, i.TargetUserIDs)
	return err
}

func scanGuildInvite(row interface{ Scan(...any) error }) (*GuildInvite, error) {
	var i GuildInvite
	var targeted, temporary int
	var roles string
	var exp, created int64
	if err := row.Scan(&i.Code, &i.GuildID, &i.ChannelID, &i.InviterID, &i.LobbyID, &targeted, &roles, &temporary,
		&i.MaxUses, &i.Uses, &exp, &created); err != nil {
		return nil, notFound(err)
	}
	if err := json.Unmarshal([]byte(roles), &i.RoleIDs); err != nil {
		return nil, err
	}
	i.Targeted, i.Temporary, i.ExpiresAt, i.CreatedAt = targeted != 0, temporary != 0, fromTS(exp), fromTS(created)
	return &i, nil
}

func (s *DB) GetGuildInvite(ctx context.Context, code string) (*GuildInvite, error) {
	return scanGuildInvite(s.q.QueryRowContext(ctx, `SELECT `+guildInviteColumns+` FROM guild_invites WHERE code=?`, code))
}

func (s *DB) UseGuildInvite(ctx context.Context, code string, now time.Time) error {
	return mustAffect(s.q.ExecContext(ctx, `UPDATE guild_invites SET uses=uses+1
		WHERE code=? AND (max_uses=0 OR uses<max_uses) AND (expires_at=0 OR expires_at>?)`, code, ts(now)))
}

// ---- lobby links

// upsertLobbyLink replaces a lobby's link; a channel linked to another lobby is a conflict.
var upsertLobbyLink = upsert(`lobby_channel_links`, `lobby_id, channel_id, app_id, linked_by, linked_at`, `lobby_id`)

func (s *DB) PutLobbyLink(ctx context.Context, l *LobbyLink) error {
	_, err := s.q.ExecContext(ctx, upsertLobbyLink, l.LobbyID, l.ChannelID, l.AppID, l.LinkedBy, ts(l.LinkedAt))
	if s.isUnique(err) {
		return ErrConflict
	}
	return err
}

func scanLink(row interface{ Scan(...any) error }) (*LobbyLink, error) {
	var l LobbyLink
	var at int64
	if err := row.Scan(&l.LobbyID, &l.ChannelID, &l.AppID, &l.LinkedBy, &at); err != nil {
		return nil, notFound(err)
	}
	l.LinkedAt = fromTS(at)
	return &l, nil
}

func (s *DB) GetLobbyLink(ctx context.Context, lobbyID uint64) (*LobbyLink, error) {
	return scanLink(s.q.QueryRowContext(ctx, `SELECT lobby_id, channel_id, app_id, linked_by, linked_at
		FROM lobby_channel_links WHERE lobby_id=?`, lobbyID))
}

func (s *DB) GetChannelLink(ctx context.Context, channelID uint64) (*LobbyLink, error) {
	return scanLink(s.q.QueryRowContext(ctx, `SELECT lobby_id, channel_id, app_id, linked_by, linked_at
		FROM lobby_channel_links WHERE channel_id=?`, channelID))
}

func (s *DB) DeleteLobbyLink(ctx context.Context, lobbyID uint64) error {
	return mustAffect(s.q.ExecContext(ctx, `DELETE FROM lobby_channel_links WHERE lobby_id=?`, lobbyID))
}
