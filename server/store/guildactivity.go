package store

import (
	"context"
	"time"
)

// GuildActivityStore keeps when each guild member was last seen, for prune (rule GLD-2): the
// service records a member's messages in the guild and the start and end of the user's gateway
// sessions. A member's join time is the floor of its last activity; the store does not keep it
// twice.
type GuildActivityStore interface {
	// TouchGuildMember records that the member was seen at at (an earlier time than the one
	// stored changes nothing).
	TouchGuildMember(ctx context.Context, guildID, userID uint64, at time.Time) error
	// TouchUserGuilds is TouchGuildMember for each guild userID is a member of.
	TouchUserGuilds(ctx context.Context, userID uint64, at time.Time) error
	// GuildMembersLastSeen returns the recorded last activity of the guild's members that have
	// one, by user id.
	GuildMembersLastSeen(ctx context.Context, guildID uint64) (map[uint64]time.Time, error)
}

const touchActivity = ` ON CONFLICT (guild_id, user_id) DO UPDATE SET seen_at=CASE WHEN excluded.seen_at > guild_member_activity.seen_at THEN excluded.seen_at ELSE guild_member_activity.seen_at END`

func (s *DB) TouchGuildMember(ctx context.Context, guildID, userID uint64, at time.Time) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO guild_member_activity (guild_id, user_id, seen_at) VALUES (?,?,?)`+touchActivity,
		guildID, userID, ts(at))
	return err
}

// TouchUserGuilds's SELECT needs its WHERE clause for SQLite to read ON CONFLICT as the upsert
// clause ("AND true" keeps it explicit).
func (s *DB) TouchUserGuilds(ctx context.Context, userID uint64, at time.Time) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO guild_member_activity (guild_id, user_id, seen_at)
		SELECT guild_id, user_id, ? FROM guild_members WHERE user_id=? AND true`+touchActivity, ts(at), userID)
	return err
}

func (s *DB) GuildMembersLastSeen(ctx context.Context, guildID uint64) (map[uint64]time.Time, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT a.user_id, a.seen_at FROM guild_member_activity a
		JOIN guild_members m ON m.guild_id=a.guild_id AND m.user_id=a.user_id WHERE a.guild_id=?`, guildID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[uint64]time.Time{}
	for rows.Next() {
		var id uint64
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = fromTS(at)
	}
	return out, rows.Err()
}
