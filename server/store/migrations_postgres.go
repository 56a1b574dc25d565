package store

// migrationsPostgres are PostgreSQL's migrations, applied as migrations are in SQLite (each once,
// counted in schema_migrations), all pending ones in one transaction. The first is the schema of
// SQLite's migrations 1 to 21 at once; later ones follow SQLite's one for one (migration n is
// SQLite's n+20).
// Types: SQLite's INTEGER is BIGINT (ids are 64-bit, times Unix nanoseconds, flags 0 or 1), BLOB
// is BYTEA. Append; never edit an applied migration.
var migrationsPostgres = []string{
	// 1: the schema of SQLite's migrations 1 to 21. Guild message search (rule GLD-3): each
	// indexed message's words (runs of letters and digits, lower case, without diacritics, as
	// FTS5's unicode61 splits them) and their tsvector under a GIN index; the triggers keep the
	// entries of indexed guilds current, as SQLite's do. sdkpp_ids reads a JSON array of ids
	// as a table (key, value), as SQLite's json_each does.
	`
CREATE TABLE applications (
	id BIGINT PRIMARY KEY,
	name TEXT NOT NULL,
	publisher_id BIGINT NOT NULL,
	parent_id BIGINT NOT NULL DEFAULT 0,
	public_client BIGINT NOT NULL DEFAULT 0,
	premium_approved BIGINT NOT NULL DEFAULT 0,
	redirect_uris TEXT NOT NULL DEFAULT '[]',
	webhook_url TEXT NOT NULL DEFAULT '',
	client_secret_hash BYTEA NOT NULL,
	bot_token_hash BYTEA NOT NULL,
	bot_user_id BIGINT NOT NULL,
	webhook_key BYTEA NOT NULL,
	created_at BIGINT NOT NULL
, sdk_terms_accepted BIGINT NOT NULL DEFAULT 0, flags BIGINT NOT NULL DEFAULT 0, channel_obfuscation BIGINT NOT NULL DEFAULT 0);
CREATE TABLE users (
	id BIGINT PRIMARY KEY,
	username TEXT NOT NULL UNIQUE,
	global_name TEXT NOT NULL DEFAULT '',
	password_hash BYTEA,
	bot BIGINT NOT NULL DEFAULT 0,
	provisional BIGINT NOT NULL DEFAULT 0,
	provisional_app_id BIGINT NOT NULL DEFAULT 0,
	premium_type BIGINT NOT NULL DEFAULT 0,
	ban_permanent BIGINT NOT NULL DEFAULT 0,
	banned_until BIGINT NOT NULL DEFAULT 0,
	restricted_by BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
, primary_guild_id BIGINT NOT NULL DEFAULT 0, primary_guild_enabled BIGINT, primary_guild_tag TEXT, primary_guild_badge TEXT);
CREATE TABLE identities (
	app_id BIGINT NOT NULL,
	type TEXT NOT NULL,
	external_id TEXT NOT NULL,
	user_id BIGINT NOT NULL,
	provisional_user_id BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (app_id, type, external_id)
);
CREATE TABLE authorizations (
	id BIGINT PRIMARY KEY,
	app_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	scopes TEXT NOT NULL,
	integration_type BIGINT NOT NULL DEFAULT -1,
	parent_id BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);
CREATE TABLE tokens (
	hash BYTEA PRIMARY KEY,
	kind TEXT NOT NULL,
	authorization_id BIGINT NOT NULL,
	app_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	scopes TEXT NOT NULL,
	expires_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE TABLE auth_codes (
	hash BYTEA PRIMARY KEY,
	app_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	redirect_uri TEXT NOT NULL,
	scopes TEXT NOT NULL,
	code_challenge TEXT NOT NULL DEFAULT '',
	nonce TEXT NOT NULL DEFAULT '',
	integration_type BIGINT NOT NULL DEFAULT -1,
	expires_at BIGINT NOT NULL,
	used BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE device_codes (
	hash BYTEA PRIMARY KEY,
	user_code TEXT NOT NULL UNIQUE,
	app_id BIGINT NOT NULL,
	scopes TEXT NOT NULL,
	granted_scopes TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL,
	user_id BIGINT NOT NULL DEFAULT 0,
	interval_seconds BIGINT NOT NULL,
	last_poll_at BIGINT NOT NULL DEFAULT 0,
	expires_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE TABLE sessions (
	hash BYTEA PRIMARY KEY,
	user_id BIGINT NOT NULL,
	expires_at BIGINT NOT NULL
);
CREATE TABLE webhook_deliveries (
	id BIGINT PRIMARY KEY,
	app_id BIGINT NOT NULL,
	event_type TEXT NOT NULL,
	body BYTEA NOT NULL,
	state TEXT NOT NULL,
	attempts BIGINT NOT NULL DEFAULT 0,
	next_attempt_at BIGINT NOT NULL,
	last_error TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	delivered_at BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE oidc_configs (
	app_id BIGINT PRIMARY KEY,
	issuer TEXT NOT NULL,
	client_id TEXT NOT NULL,
	jwks_uri TEXT NOT NULL,
	jwks BYTEA NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE TABLE settings (
	key TEXT PRIMARY KEY,
	value BYTEA NOT NULL
);
CREATE TABLE lobbies (
	id BIGINT PRIMARY KEY,
	app_id BIGINT NOT NULL,
	secret_hash BYTEA,
	secret_expires_at BIGINT NOT NULL DEFAULT 0,
	from_secret BIGINT NOT NULL DEFAULT 0,
	metadata TEXT NOT NULL DEFAULT '{}',
	idle_timeout_seconds BIGINT NOT NULL,
	last_activity_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE TABLE lobby_members (
	lobby_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	metadata TEXT NOT NULL DEFAULT '{}',
	flags BIGINT NOT NULL DEFAULT 0,
	additional_name TEXT NOT NULL DEFAULT '',
	joined_at BIGINT NOT NULL,
	PRIMARY KEY (lobby_id, user_id)
);
CREATE TABLE lobby_messages (
	id BIGINT PRIMARY KEY,
	lobby_id BIGINT NOT NULL,
	app_id BIGINT NOT NULL,
	author_id BIGINT NOT NULL,
	content TEXT NOT NULL,
	metadata TEXT NOT NULL DEFAULT '{}',
	moderation_metadata TEXT NOT NULL DEFAULT '{}',
	flags BIGINT NOT NULL DEFAULT 0,
	additional_name TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL
, nonce TEXT);
CREATE TABLE dm_channels (
	id BIGINT PRIMARY KEY,
	user_low BIGINT NOT NULL,
	user_high BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	UNIQUE (user_low, user_high)
);
CREATE TABLE dm_messages (
	id BIGINT PRIMARY KEY,
	channel_id BIGINT NOT NULL,
	app_id BIGINT NOT NULL,
	author_id BIGINT NOT NULL,
	recipient_id BIGINT NOT NULL,
	content TEXT NOT NULL,
	metadata TEXT NOT NULL DEFAULT '{}',
	moderation_metadata TEXT NOT NULL DEFAULT '{}',
	flags BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	edited_at BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE guilds (
	id BIGINT PRIMARY KEY,
	name TEXT NOT NULL,
	owner_id BIGINT NOT NULL,
	created_at BIGINT NOT NULL
, features TEXT NOT NULL DEFAULT '[]');
CREATE TABLE guild_members (
	guild_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	manage_channels BIGINT NOT NULL DEFAULT 0,
	joined_at BIGINT NOT NULL, nick TEXT NOT NULL DEFAULT '', avatar TEXT NOT NULL DEFAULT '', banner TEXT NOT NULL DEFAULT '', bio TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (guild_id, user_id)
);
CREATE TABLE guild_channels (
	id BIGINT PRIMARY KEY,
	guild_id BIGINT NOT NULL,
	name TEXT NOT NULL,
	type BIGINT NOT NULL,
	position BIGINT NOT NULL,
	parent_id BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);
CREATE TABLE guild_invites (
	code TEXT PRIMARY KEY,
	guild_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	inviter_id BIGINT NOT NULL,
	lobby_id BIGINT NOT NULL DEFAULT 0,
	max_uses BIGINT NOT NULL,
	uses BIGINT NOT NULL DEFAULT 0,
	expires_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL
, targeted BIGINT NOT NULL DEFAULT 0, role_ids TEXT NOT NULL DEFAULT '[]', temporary BIGINT NOT NULL DEFAULT 0);
CREATE TABLE lobby_channel_links (
	lobby_id BIGINT PRIMARY KEY,
	channel_id BIGINT NOT NULL UNIQUE,
	app_id BIGINT NOT NULL,
	linked_by BIGINT NOT NULL,
	linked_at BIGINT NOT NULL
);
CREATE TABLE relationships (
	user_id BIGINT NOT NULL,
	peer_id BIGINT NOT NULL,
	app_id BIGINT NOT NULL,
	type BIGINT NOT NULL,
	spam BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (user_id, app_id, peer_id)
);
CREATE TABLE user_settings (
	user_id BIGINT PRIMARY KEY,
	custom_status_privacy BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE guild_roles (
	id BIGINT PRIMARY KEY,
	guild_id BIGINT NOT NULL,
	name TEXT NOT NULL,
	color BIGINT NOT NULL DEFAULT 0,
	secondary_color BIGINT,
	tertiary_color BIGINT,
	permissions BIGINT NOT NULL DEFAULT 0,
	position BIGINT NOT NULL DEFAULT 0,
	hoist BIGINT NOT NULL DEFAULT 0,
	mentionable BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE guild_member_roles (
	guild_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	role_id BIGINT NOT NULL,
	PRIMARY KEY (guild_id, user_id, role_id)
);
CREATE TABLE channel_overwrites (
	channel_id BIGINT NOT NULL,
	target_id BIGINT NOT NULL,
	type BIGINT NOT NULL,
	allow BIGINT NOT NULL DEFAULT 0,
	deny BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (channel_id, target_id)
);
CREATE TABLE guild_messages (
	id BIGINT PRIMARY KEY,
	channel_id BIGINT NOT NULL,
	guild_id BIGINT NOT NULL,
	author_id BIGINT NOT NULL,
	content TEXT NOT NULL,
	mentions TEXT NOT NULL DEFAULT '[]',
	created_at BIGINT NOT NULL,
	edited_at BIGINT NOT NULL DEFAULT 0
, ref_type BIGINT, ref_message_id BIGINT NOT NULL DEFAULT 0, ref_channel_id BIGINT NOT NULL DEFAULT 0, ref_guild_id BIGINT NOT NULL DEFAULT 0, snapshot TEXT);
CREATE TABLE guild_tags (
	guild_id BIGINT PRIMARY KEY,
	tag TEXT NOT NULL,
	badge TEXT
);
CREATE TABLE connections (
	user_id BIGINT NOT NULL,
	type TEXT NOT NULL,
	id TEXT NOT NULL,
	name TEXT NOT NULL,
	verified BIGINT NOT NULL DEFAULT 0,
	visibility BIGINT NOT NULL DEFAULT 0,
	friend_sync BIGINT NOT NULL DEFAULT 0,
	show_activity BIGINT NOT NULL DEFAULT 0,
	two_way_link BIGINT NOT NULL DEFAULT 0,
	revoked BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (user_id, type, id)
);
CREATE TABLE skus (
	id BIGINT PRIMARY KEY,
	app_id BIGINT NOT NULL,
	type BIGINT NOT NULL,
	name TEXT NOT NULL,
	slug TEXT NOT NULL,
	flags BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);
CREATE TABLE subscriptions (
	id BIGINT PRIMARY KEY,
	sku_id BIGINT NOT NULL,
	app_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	current_period_start BIGINT NOT NULL,
	current_period_end BIGINT NOT NULL,
	canceled_at BIGINT NOT NULL DEFAULT 0,
	country TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL
);
CREATE TABLE voice_channel_status (
	channel_id BIGINT PRIMARY KEY,
	guild_id BIGINT NOT NULL,
	status TEXT NOT NULL DEFAULT '',
	voice_start_time BIGINT NOT NULL DEFAULT 0,
	updated_at BIGINT NOT NULL
);
CREATE TABLE audit_log (
	id BIGINT PRIMARY KEY,
	guild_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	target_id BIGINT NOT NULL,
	action_type BIGINT NOT NULL,
	options TEXT NOT NULL DEFAULT '{}',
	created_at BIGINT NOT NULL
);
CREATE TABLE guild_pins (
	channel_id BIGINT NOT NULL,
	message_id BIGINT NOT NULL,
	pinned_at BIGINT NOT NULL,
	PRIMARY KEY (channel_id, message_id)
);
CREATE TABLE guild_search (
	guild_id BIGINT PRIMARY KEY,
	indexed_at BIGINT NOT NULL
);
CREATE TABLE guild_invite_targets (
	code TEXT NOT NULL,
	user_id BIGINT NOT NULL,
	PRIMARY KEY (code, user_id)
);
CREATE TABLE guild_invite_jobs (
	code TEXT PRIMARY KEY,
	seq BIGINT NOT NULL,
	status BIGINT NOT NULL,
	user_ids TEXT NOT NULL DEFAULT '[]',
	total_users BIGINT NOT NULL,
	processed_users BIGINT NOT NULL DEFAULT 0,
	error_message TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	completed_at BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE guild_attachments (
	id BIGINT PRIMARY KEY,
	message_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	position BIGINT NOT NULL,
	filename TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	content_type TEXT NOT NULL,
	size BIGINT NOT NULL,
	width BIGINT NOT NULL DEFAULT 0,
	height BIGINT NOT NULL DEFAULT 0,
	flags BIGINT NOT NULL DEFAULT 0,
	data BYTEA NOT NULL
);
CREATE TABLE application_commands (
	app_id BIGINT NOT NULL,
	guild_id BIGINT NOT NULL,
	commands TEXT NOT NULL,
	PRIMARY KEY (app_id, guild_id)
);
CREATE TABLE guild_channel_settings (
	channel_id BIGINT PRIMARY KEY,
	rate_limit_per_user BIGINT NOT NULL DEFAULT 0,
	topic TEXT NOT NULL DEFAULT ''
);
CREATE TABLE guild_emojis (
	id BIGINT PRIMARY KEY,
	guild_id BIGINT NOT NULL,
	name TEXT NOT NULL,
	image TEXT NOT NULL,
	animated BIGINT NOT NULL DEFAULT 0,
	creator_id BIGINT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE TABLE guild_scheduled_events (
	id BIGINT PRIMARY KEY,
	guild_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL DEFAULT 0,
	creator_id BIGINT NOT NULL,
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	privacy_level BIGINT NOT NULL,
	status BIGINT NOT NULL,
	entity_type BIGINT NOT NULL,
	location TEXT NOT NULL DEFAULT '',
	start_at BIGINT NOT NULL,
	end_at BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);
CREATE TABLE guild_member_activity (
	guild_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	seen_at BIGINT NOT NULL,
	PRIMARY KEY (guild_id, user_id)
);
CREATE UNIQUE INDEX applications_bot_token ON applications(bot_token_hash);
CREATE INDEX identities_user ON identities(user_id);
CREATE UNIQUE INDEX authorizations_top ON authorizations(app_id, user_id) WHERE parent_id = 0;
CREATE INDEX authorizations_user ON authorizations(user_id);
CREATE INDEX authorizations_parent ON authorizations(parent_id);
CREATE INDEX tokens_authorization ON tokens(authorization_id);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);
CREATE UNIQUE INDEX lobbies_secret ON lobbies(app_id, secret_hash) WHERE secret_hash IS NOT NULL;
CREATE INDEX lobbies_expiry ON lobbies(expires_at);
CREATE INDEX lobby_members_user ON lobby_members(user_id);
CREATE INDEX lobby_messages_lobby ON lobby_messages(lobby_id, id);
CREATE INDEX dm_channels_high ON dm_channels(user_high);
CREATE INDEX dm_messages_channel ON dm_messages(channel_id, id);
CREATE INDEX guild_members_user ON guild_members(user_id);
CREATE INDEX guild_channels_guild ON guild_channels(guild_id);
CREATE INDEX relationships_peer ON relationships(peer_id);
CREATE INDEX lobby_messages_nonce ON lobby_messages(lobby_id, author_id, nonce) WHERE nonce IS NOT NULL;
CREATE INDEX lobby_messages_nonce_time ON lobby_messages(created_at) WHERE nonce IS NOT NULL;
CREATE INDEX guild_roles_guild ON guild_roles(guild_id);
CREATE INDEX guild_messages_channel ON guild_messages(channel_id, id);
CREATE INDEX users_primary_guild ON users(primary_guild_id) WHERE primary_guild_id != 0;
CREATE INDEX skus_app ON skus(app_id);
CREATE INDEX subscriptions_sku ON subscriptions(sku_id, id);
CREATE INDEX voice_channel_status_guild ON voice_channel_status(guild_id);
CREATE INDEX audit_log_guild ON audit_log(guild_id, id);
CREATE INDEX guild_pins_time ON guild_pins(channel_id, pinned_at);
CREATE INDEX guild_invites_channel ON guild_invites(channel_id, created_at);
CREATE INDEX guild_invite_jobs_processing ON guild_invite_jobs(created_at) WHERE status = 1;
CREATE INDEX guild_attachments_message ON guild_attachments(message_id, position);
CREATE INDEX guild_emojis_guild ON guild_emojis(guild_id);
CREATE INDEX guild_scheduled_events_guild ON guild_scheduled_events(guild_id);

CREATE EXTENSION IF NOT EXISTS unaccent;

CREATE FUNCTION sdkpp_ids(ids text) RETURNS TABLE (key bigint, value bigint)
LANGUAGE sql IMMUTABLE AS $$
	SELECT (t.ord - 1)::bigint, t.e::bigint FROM jsonb_array_elements_text(ids::jsonb) WITH ORDINALITY AS t(e, ord)
$$;

CREATE FUNCTION sdkpp_fts_words(content text) RETURNS text[]
LANGUAGE sql STABLE AS $$
	SELECT array_remove(regexp_split_to_array(lower(unaccent(content)), '[^[:alnum:]]+'), '')
$$;

CREATE TABLE guild_message_fts (
	id BIGINT PRIMARY KEY,
	words TEXT[] NOT NULL,
	tsv TSVECTOR NOT NULL
);
CREATE INDEX guild_message_fts_tsv ON guild_message_fts USING GIN (tsv);

CREATE FUNCTION guild_message_fts_sync() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' THEN
		DELETE FROM guild_message_fts WHERE id = OLD.id;
		RETURN OLD;
	END IF;
	IF EXISTS (SELECT 1 FROM guild_search WHERE guild_id = NEW.guild_id) THEN
		INSERT INTO guild_message_fts (id, words, tsv)
		SELECT NEW.id, w, to_tsvector('simple', array_to_string(w, ' ')) FROM sdkpp_fts_words(NEW.content) AS w
		ON CONFLICT (id) DO UPDATE SET words = excluded.words, tsv = excluded.tsv;
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER guild_message_fts_insert AFTER INSERT ON guild_messages
	FOR EACH ROW EXECUTE FUNCTION guild_message_fts_sync();
CREATE TRIGGER guild_message_fts_update AFTER UPDATE OF content ON guild_messages
	FOR EACH ROW EXECUTE FUNCTION guild_message_fts_sync();
CREATE TRIGGER guild_message_fts_delete AFTER DELETE ON guild_messages
	FOR EACH ROW EXECUTE FUNCTION guild_message_fts_sync();

-- The messages having every word of words (a JSON array of strings; each word a phrase of its
-- runs), ranked as FTS5's bm25 ranks them: lower is better, idf over the whole index, k1 1.2,
-- b 0.75. A word's count in a message is that of its first run.
CREATE FUNCTION sdkpp_fts_search(words text) RETURNS TABLE (id bigint, rank float8)
LANGUAGE sql STABLE AS $$
	WITH q AS (
		SELECT w.tokens, phraseto_tsquery('simple', array_to_string(w.tokens, ' ')) AS tq
		FROM (SELECT sdkpp_fts_words(e) AS tokens FROM jsonb_array_elements_text(words::jsonb) AS e) AS w
		WHERE cardinality(w.tokens) > 0
	), whole AS (
		SELECT string_agg('(' || q.tq::text || ')', ' & ')::tsquery AS tq FROM q
	), stats AS (
		SELECT count(*)::float8 AS n, GREATEST(avg(cardinality(f.words)), 1)::float8 AS avglen FROM guild_message_fts f
	), terms AS (
		SELECT q.tokens, GREATEST(ln((s.n - d.k + 0.5) / (d.k + 0.5)), 1e-6) AS idf
		FROM q, stats s, LATERAL (SELECT count(*)::float8 AS k FROM guild_message_fts f WHERE f.tsv @@ q.tq) AS d
	)
	SELECT f.id, -SUM(t.idf * (c.tf * 2.2) / (c.tf + 1.2 * (0.25 + 0.75 * cardinality(f.words) / s.avglen)))
	FROM whole, stats s, guild_message_fts f, terms t,
		LATERAL (SELECT cardinality(array_positions(f.words, t.tokens[1]))::float8 AS tf) AS c
	WHERE f.tsv @@ whole.tq
	GROUP BY f.id
$$;

CREATE FUNCTION guild_attachments_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM guild_attachments WHERE message_id = OLD.id;
	RETURN OLD;
END
$$;
CREATE TRIGGER guild_attachments_delete AFTER DELETE ON guild_messages
	FOR EACH ROW EXECUTE FUNCTION guild_attachments_delete();
`,
	// 2 (SQLite's 22): token grants (RFC 9700).
	`
CREATE TABLE token_grants (
	id BIGINT PRIMARY KEY,
	app_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	revoked_at BIGINT NOT NULL DEFAULT 0
);
ALTER TABLE tokens ADD COLUMN grant_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN used_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX tokens_grant ON tokens(grant_id) WHERE grant_id <> 0;
ALTER TABLE auth_codes ADD COLUMN grant_id BIGINT NOT NULL DEFAULT 0;
`,
	// 3 (SQLite's 23): claims of queued work.
	`
ALTER TABLE webhook_deliveries ADD COLUMN claimed_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE guild_invite_jobs ADD COLUMN claimed_until BIGINT NOT NULL DEFAULT 0;
`,
	// 4 (SQLite's 24): the operator console (package console): operators, separate from players, with a
	// role; their signed-in sessions; and the audit log of what they did.
	`
CREATE TABLE operators (
	id BIGINT PRIMARY KEY,
	username TEXT NOT NULL,
	username_key TEXT NOT NULL UNIQUE,
	password_hash BYTEA NOT NULL,
	role TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE TABLE operator_sessions (
	hash BYTEA PRIMARY KEY,
	operator_id BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL
);
CREATE TABLE operator_actions (
	id BIGINT PRIMARY KEY,
	operator_id BIGINT NOT NULL,
	operator TEXT NOT NULL,
	action TEXT NOT NULL,
	target TEXT NOT NULL,
	detail TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL
);
CREATE INDEX operator_actions_created ON operator_actions(created_at);
CREATE INDEX webhook_deliveries_app ON webhook_deliveries(app_id, created_at);
`,
	// 5 (SQLite's 25): the node registry: each node's heartbeat row, read by the console's cluster page;
	// and a guild's recent messages across its channels, for the console's guild page.
	`
CREATE TABLE nodes (
	id BIGINT PRIMARY KEY,
	address TEXT NOT NULL,
	started_at BIGINT NOT NULL,
	sessions BIGINT NOT NULL,
	calls BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE INDEX guild_messages_guild ON guild_messages(guild_id, id);
`,
	// 6 (SQLite's 26): shared state (shared.go): fixed-window counters (rate limits, bot session starts,
	// member requests, slowmode) and sign-in failures, which every node on the database counts
	// together.
	`
CREATE TABLE rate_windows (
	key TEXT PRIMARY KEY,
	start_at BIGINT NOT NULL,
	ends_at BIGINT NOT NULL,
	hits INTEGER NOT NULL
);
CREATE INDEX rate_windows_ends ON rate_windows(ends_at);
CREATE TABLE login_failures (
	key TEXT NOT NULL,
	at BIGINT NOT NULL
);
CREATE INDEX login_failures_key ON login_failures(key, at);
CREATE INDEX login_failures_at ON login_failures(at);
`,
	// 7 (SQLite's 27): pending interactions and open modals (package interactions), which the node that
	// answers one may not be the node that made it.
	`
CREATE TABLE pending_interactions (
	id BIGINT PRIMARY KEY,
	app_id BIGINT NOT NULL,
	bot_user_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	kind INTEGER NOT NULL,
	token_hash BYTEA NOT NULL,
	meta TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	answered INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX pending_interactions_created ON pending_interactions(created_at);
CREATE TABLE open_modals (
	id BIGINT PRIMARY KEY,
	app_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	guild_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	custom_id TEXT NOT NULL,
	fields TEXT NOT NULL,
	opened_at BIGINT NOT NULL
);
CREATE INDEX open_modals_opened ON open_modals(opened_at);
`,
	// 8 (SQLite's 28): a member's last message in a guild, for prune (GuildMembersLastSeen), read from the
	// messages instead of an activity row written at every send (rows written so far stay).
	`
CREATE INDEX guild_messages_author ON guild_messages(guild_id, author_id, created_at);
`,
	// 9 (SQLite's 29): attachments uploaded a chunk at a time (store.AttachmentChunk), never whole in memory;
	// the data of older ones stays in guild_attachments.
	`
CREATE TABLE guild_attachment_chunks (
	attachment_id BIGINT NOT NULL,
	seq BIGINT NOT NULL,
	data BYTEA NOT NULL,
	PRIMARY KEY (attachment_id, seq)
);
CREATE FUNCTION guild_attachment_chunks_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM guild_attachment_chunks WHERE attachment_id = OLD.id;
	RETURN OLD;
END
$$;
CREATE TRIGGER guild_attachment_chunks_delete AFTER DELETE ON guild_attachments
	FOR EACH ROW EXECUTE FUNCTION guild_attachment_chunks_delete();
`,
	// 10 (SQLite's 30): the interaction a guild message answers.
	`
ALTER TABLE guild_messages ADD COLUMN interaction TEXT;
`,
	// 11 (SQLite's 31): temporary guild membership.
	`
ALTER TABLE guild_members ADD COLUMN temporary BIGINT NOT NULL DEFAULT 0;
`,
	// 12 (SQLite's 32): replies in DM channels.
	`
ALTER TABLE dm_messages ADD COLUMN ref_message_id BIGINT NOT NULL DEFAULT 0;
`,
	// 13 (SQLite's 33): pins of DM channels, as guild_pins.
	`
CREATE TABLE dm_pins (
	channel_id BIGINT NOT NULL,
	message_id BIGINT NOT NULL,
	pinned_at BIGINT NOT NULL,
	PRIMARY KEY (channel_id, message_id)
);
CREATE INDEX dm_pins_time ON dm_pins(channel_id, pinned_at);
`,
	// 14 (SQLite's 34): the state of an interaction past its initial response, its messages,
	// and the lookup by token hash.
	`
ALTER TABLE pending_interactions ADD COLUMN focus_type INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pending_interactions ADD COLUMN deferred INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pending_interactions ADD COLUMN defer_flags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pending_interactions ADD COLUMN original_id BIGINT NOT NULL DEFAULT 0;
CREATE INDEX pending_interactions_token ON pending_interactions(token_hash);
CREATE TABLE interaction_messages (
	interaction_id BIGINT NOT NULL,
	message_id BIGINT NOT NULL,
	ephemeral TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (interaction_id, message_id)
);
`,
	// 15 (SQLite's 35): the cluster-wide order locks (OrderLock), each with the largest id used
	// under it.
	`
CREATE TABLE order_locks (
	key TEXT PRIMARY KEY,
	last_id BIGINT NOT NULL
);
`,
	// 16 (SQLite's 36): every change of an application or an authorization notifies
	// sdkpp_memo when it commits, so that each node's memo of them (memoListener) forgets what
	// another node changed. (SQLite's 36 is empty: one node, whose memo sees every write.)
	`
CREATE FUNCTION sdkpp_memo_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('sdkpp_memo', '');
	RETURN NULL;
END
$$;
CREATE TRIGGER applications_memo AFTER INSERT OR UPDATE OR DELETE ON applications
	FOR EACH ROW EXECUTE FUNCTION sdkpp_memo_notify();
CREATE TRIGGER authorizations_memo AFTER INSERT OR UPDATE OR DELETE ON authorizations
	FOR EACH ROW EXECUTE FUNCTION sdkpp_memo_notify();
`,
	// 17 (SQLite's 37): the node registry keeps each node's life (its process; a restarted node
	// has a new one) and which node took its sessions over once it was found down (0: none).
	`
ALTER TABLE nodes ADD COLUMN life TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN down_by BIGINT NOT NULL DEFAULT 0;
`,
	// 18 (SQLite's 38): the transactional outbox (outbox.go): events stored with the change
	// they tell of, published on the bus after the commit, by another node should this one die.
	`
CREATE TABLE outbox (
	id BIGSERIAL PRIMARY KEY,
	key TEXT NOT NULL,
	data BYTEA NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX outbox_key ON outbox(key, id);
CREATE INDEX outbox_created ON outbox(created_at);
`,
	// 19 (SQLite's 39): the cache epoch shared by the nodes (DB.SharedEpoch), one row moved on
	// in the transaction of every write that can make a cached user, application or token wrong.
	`
CREATE TABLE cache_epoch (
	id BIGINT PRIMARY KEY,
	n BIGINT NOT NULL
);
INSERT INTO cache_epoch (id, n) VALUES (1, 0);
`,
	// 20 (SQLite's 40): a token carries its row's id (a snowflake) and a secret, of which the
	// hash is kept: a new row goes to the right edge of the primary key's index instead of to a
	// random page of the hashes' index. The tokens issued before keep their hash and are found
	// by it, through a partial index of their own, until they expire (legacy); they get ids
	// below every snowflake.
	`
ALTER TABLE tokens DROP CONSTRAINT tokens_pkey;
ALTER TABLE tokens ADD COLUMN id BIGINT;
ALTER TABLE tokens ADD COLUMN legacy SMALLINT NOT NULL DEFAULT 0;
UPDATE tokens SET id = r.n, legacy = 1
	FROM (SELECT hash AS h, row_number() OVER (ORDER BY created_at, hash) AS n FROM tokens) AS r
	WHERE tokens.hash = r.h;
ALTER TABLE tokens ALTER COLUMN id SET NOT NULL;
ALTER TABLE tokens ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX tokens_legacy ON tokens(hash) WHERE legacy = 1;
`,
	// 21 (SQLite's 41): every statement that updates or deletes tokens, or moves the cache
	// epoch, notifies sdkpp_memo when it commits, so that each node's memo (for reads that may be
	// a moment behind: MayBeBehind) forgets a token another node revoked, and the shared epoch it
	// read. An insert of a token needs no notice: the memo keeps only tokens it found.
	`
CREATE TRIGGER tokens_memo AFTER UPDATE OR DELETE ON tokens
	FOR EACH STATEMENT EXECUTE FUNCTION sdkpp_memo_notify();
CREATE TRIGGER cache_epoch_memo AFTER UPDATE ON cache_epoch
	FOR EACH STATEMENT EXECUTE FUNCTION sdkpp_memo_notify();
`,
	// 22 (SQLite's 42): the enforced nonces are found through the author's messages of the
	// window, in an index where they come one after another.
	`
DROP INDEX lobby_messages_nonce;
CREATE INDEX lobby_messages_nonce ON lobby_messages(lobby_id, author_id, created_at) WHERE nonce IS NOT NULL;
`,
	// 23 (SQLite's 43): the newest message with an enforced nonce is read from the messages of
	// the nonce window, found by their ids, instead of from an index of its own.
	`
DROP INDEX lobby_messages_nonce_time;
`,
	// 24 (SQLite's 44): a group of lobby messages stored on an order lock's connection records
	// the key's floor (OrderLock) in its outbox rows instead of in order_locks: an update of the
	// key's row per commit, its row version and WAL records, spared. The lock's release moves the
	// floors of the rows it deletes to order_locks in the deletion's transaction, and taking the
	// lock reads the largest of both.
	`
ALTER TABLE outbox ADD COLUMN last_id BIGINT NOT NULL DEFAULT 0;
`,
	// 25 (SQLite's 45): SQLite's nonce index is dropped; PostgreSQL keeps its own, which its
	// planner chooses by the table's statistics.
	`SELECT 1`,
	// 26 (SQLite's 46): PostgreSQL's nonce index goes too. An enforced nonce is looked up only
	// for NonceWindow after a lobby service's memory of them starts, among the lobby's messages
	// of the window found by their ids (lobby_messages_lobby); the index cost every stored
	// message with an enforced nonce an index entry and its WAL record.
	`
DROP INDEX lobby_messages_nonce;
`,
}
