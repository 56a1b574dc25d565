package store

import (
	"context"
	"time"
)

// GuildActivityStore keeps when each guild member was last seen, for prune (rule GLD-2): the
// start and end of the user's gateway sessions, which the service records, and the member's
// last message in the guild, which the store reads from the messages themselves (an index on
// guild, author and time makes it one look-up per member, and a send writes nothing more). A
// member's join time is the floor of its last activity; the store does not keep it twice.
type GuildActivityStore interface {
	// TouchUserGuilds records that the user was seen at at in each guild it is a member of (an
	// earlier time than the one stored changes nothing).
	TouchUserGuilds(ctx context.Context, userID uint64, at time.Time) error
	// GuildMembersLastSeen returns the last activity (session or message) of the guild's
	// members that have one, by user id.
	GuildMembersLastSeen(ctx context.Context, guildID uint64) (map[uint64]time.Time, error)
}

const touchActivity = ` ON CONFLICT (guild_id, user_id) DO UPDATE SET seen_at=CASE WHEN excluded.seen_at > guild_member_activity.seen_at THEN excluded.seen_at ELSE guild_member_activity.seen_at END`

// TouchUserGuilds's SELECT needs its WHERE clause for SQLite to read ON CONFLICT as the upsert
// clause ("AND true" keeps it explicit).
func (s *DB) TouchUserGuilds(ctx context.Context, userID uint64, at time.Time) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO guild_member_activity (guild_id, user_id, seen_at)
		SELECT guild_id, user_id, ? FROM guild_members WHERE user_id=? AND true`+touchActivity, ts(at), userID)
	return err
}

// GuildMembersLastSeen reads, for each member, its activity row and its last message (the
// largest created_at of index guild_messages_author).
func (s *DB) GuildMembersLastSeen(ctx context.Context, guildID uint64) (map[uint64]time.Time, error) {
	rows, err := s.q.QueryContext(ctx, `SELECT m.user_id,
		COALESCE((SELECT a.seen_at FROM guild_member_activity a WHERE a.guild_id=m.guild_id AND a.user_id=m.user_id), 0),
		COALESCE((SELECT MAX(g.created_at) FROM guild_messages g WHERE g.guild_id=m.guild_id AND g.author_id=m.user_id), 0)
		FROM guild_members m WHERE m.guild_id=?`, guildID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[uint64]time.Time{}
	for rows.Next() {
		var id uint64
		var session, message int64
		if err := rows.Scan(&id, &session, &message); err != nil {
			return nil, err
		}
		if at := max(session, message); at != 0 {
			out[id] = fromTS(at)
		}
	}
	return out, rows.Err()
}
