package store

// migrations are applied in order, each once, inside one transaction each; the number of applied
// migrations is kept in schema_migrations. Append; never edit an applied migration.
var migrations = []string{
	// 1: accounts and tokens.
	`
CREATE TABLE applications (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL,
	publisher_id INTEGER NOT NULL,
	parent_id INTEGER NOT NULL DEFAULT 0,
	public_client INTEGER NOT NULL DEFAULT 0,
	premium_approved INTEGER NOT NULL DEFAULT 0,
	redirect_uris TEXT NOT NULL DEFAULT '[]',
	webhook_url TEXT NOT NULL DEFAULT '',
	client_secret_hash BLOB NOT NULL,
	bot_token_hash BLOB NOT NULL,
	bot_user_id INTEGER NOT NULL,
	webhook_key BLOB NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX applications_bot_token ON applications(bot_token_hash);

CREATE TABLE users (
	id INTEGER PRIMARY KEY,
	username TEXT NOT NULL UNIQUE,
	global_name TEXT NOT NULL DEFAULT '',
	password_hash BLOB,
	bot INTEGER NOT NULL DEFAULT 0,
	provisional INTEGER NOT NULL DEFAULT 0,
	provisional_app_id INTEGER NOT NULL DEFAULT 0,
	premium_type INTEGER NOT NULL DEFAULT 0,
	ban_permanent INTEGER NOT NULL DEFAULT 0,
	banned_until INTEGER NOT NULL DEFAULT 0,
	restricted_by INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);

CREATE TABLE identities (
	app_id INTEGER NOT NULL,
	type TEXT NOT NULL,
	external_id TEXT NOT NULL,
	user_id INTEGER NOT NULL,
	provisional_user_id INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (app_id, type, external_id)
);
CREATE INDEX identities_user ON identities(user_id);

CREATE TABLE authorizations (
	id INTEGER PRIMARY KEY,
	app_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	scopes TEXT NOT NULL,
	integration_type INTEGER NOT NULL DEFAULT -1,
	parent_id INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX authorizations_top ON authorizations(app_id, user_id) WHERE parent_id = 0;
CREATE INDEX authorizations_user ON authorizations(user_id);
CREATE INDEX authorizations_parent ON authorizations(parent_id);

CREATE TABLE tokens (
	hash BLOB PRIMARY KEY,
	kind TEXT NOT NULL,
	authorization_id INTEGER NOT NULL,
	app_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	scopes TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX tokens_authorization ON tokens(authorization_id);

CREATE TABLE auth_codes (
	hash BLOB PRIMARY KEY,
	app_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	redirect_uri TEXT NOT NULL,
	scopes TEXT NOT NULL,
	code_challenge TEXT NOT NULL DEFAULT '',
	nonce TEXT NOT NULL DEFAULT '',
	integration_type INTEGER NOT NULL DEFAULT -1,
	expires_at INTEGER NOT NULL,
	used INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE device_codes (
	hash BLOB PRIMARY KEY,
	user_code TEXT NOT NULL UNIQUE,
	app_id INTEGER NOT NULL,
	scopes TEXT NOT NULL,
	granted_scopes TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL,
	user_id INTEGER NOT NULL DEFAULT 0,
	interval_seconds INTEGER NOT NULL,
	last_poll_at INTEGER NOT NULL DEFAULT 0,
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);

CREATE TABLE sessions (
	hash BLOB PRIMARY KEY,
	user_id INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE webhook_deliveries (
	id INTEGER PRIMARY KEY,
	app_id INTEGER NOT NULL,
	event_type TEXT NOT NULL,
	body BLOB NOT NULL,
	state TEXT NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0,
	next_attempt_at INTEGER NOT NULL,
	last_error TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	delivered_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);

CREATE TABLE oidc_configs (
	app_id INTEGER PRIMARY KEY,
	issuer TEXT NOT NULL,
	client_id TEXT NOT NULL,
	jwks_uri TEXT NOT NULL,
	jwks BLOB NOT NULL,
	updated_at INTEGER NOT NULL
);

CREATE TABLE settings (
	key TEXT PRIMARY KEY,
	value BLOB NOT NULL
);
`,
	// 2: whether the application accepted the SDK terms (rule AU-3).
	`ALTER TABLE applications ADD COLUMN sdk_terms_accepted INTEGER NOT NULL DEFAULT 0;`,
	// 3: lobbies, their members and messages (package lobbies). Maps are JSON objects.
	`
CREATE TABLE lobbies (
	id INTEGER PRIMARY KEY,
	app_id INTEGER NOT NULL,
	secret_hash BLOB,
	secret_expires_at INTEGER NOT NULL DEFAULT 0,
	from_secret INTEGER NOT NULL DEFAULT 0,
	metadata TEXT NOT NULL DEFAULT '{}',
	idle_timeout_seconds INTEGER NOT NULL,
	last_activity_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX lobbies_secret ON lobbies(app_id, secret_hash) WHERE secret_hash IS NOT NULL;
CREATE INDEX lobbies_expiry ON lobbies(expires_at);

CREATE TABLE lobby_members (
	lobby_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	metadata TEXT NOT NULL DEFAULT '{}',
	flags INTEGER NOT NULL DEFAULT 0,
	additional_name TEXT NOT NULL DEFAULT '',
	joined_at INTEGER NOT NULL,
	PRIMARY KEY (lobby_id, user_id)
);
CREATE INDEX lobby_members_user ON lobby_members(user_id);

CREATE TABLE lobby_messages (
	id INTEGER PRIMARY KEY,
	lobby_id INTEGER NOT NULL,
	app_id INTEGER NOT NULL,
	author_id INTEGER NOT NULL,
	content TEXT NOT NULL,
	metadata TEXT NOT NULL DEFAULT '{}',
	moderation_metadata TEXT NOT NULL DEFAULT '{}',
	flags INTEGER NOT NULL DEFAULT 0,
	additional_name TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
);
CREATE INDEX lobby_messages_lobby ON lobby_messages(lobby_id, id);
`,
	// 4: game direct messages (package dms): one channel per pair of users, and its messages.
	`
CREATE TABLE dm_channels (
	id INTEGER PRIMARY KEY,
	user_low INTEGER NOT NULL,
	user_high INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	UNIQUE (user_low, user_high)
);
CREATE INDEX dm_channels_high ON dm_channels(user_high);

CREATE TABLE dm_messages (
	id INTEGER PRIMARY KEY,
	channel_id INTEGER NOT NULL,
	app_id INTEGER NOT NULL,
	author_id INTEGER NOT NULL,
	recipient_id INTEGER NOT NULL,
	content TEXT NOT NULL,
	metadata TEXT NOT NULL DEFAULT '{}',
	moderation_metadata TEXT NOT NULL DEFAULT '{}',
	flags INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	edited_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX dm_messages_channel ON dm_messages(channel_id, id);
`,
	// 5: guilds, their members and channels, guild invites, and lobbies' linked channels (packages
	// guilds and lobbies).
	`
CREATE TABLE guilds (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL,
	owner_id INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);

CREATE TABLE guild_members (
	guild_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	manage_channels INTEGER NOT NULL DEFAULT 0,
	joined_at INTEGER NOT NULL,
	PRIMARY KEY (guild_id, user_id)
);
CREATE INDEX guild_members_user ON guild_members(user_id);

CREATE TABLE guild_channels (
	id INTEGER PRIMARY KEY,
	guild_id INTEGER NOT NULL,
	name TEXT NOT NULL,
	type INTEGER NOT NULL,
	position INTEGER NOT NULL,
	parent_id INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);
CREATE INDEX guild_channels_guild ON guild_channels(guild_id);

CREATE TABLE guild_invites (
	code TEXT PRIMARY KEY,
	guild_id INTEGER NOT NULL,
	channel_id INTEGER NOT NULL,
	inviter_id INTEGER NOT NULL,
	lobby_id INTEGER NOT NULL DEFAULT 0,
	max_uses INTEGER NOT NULL,
	uses INTEGER NOT NULL DEFAULT 0,
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);

CREATE TABLE lobby_channel_links (
	lobby_id INTEGER PRIMARY KEY,
	channel_id INTEGER NOT NULL UNIQUE,
	app_id INTEGER NOT NULL,
	linked_by INTEGER NOT NULL,
	linked_at INTEGER NOT NULL
);
`,
	// 6: relationships (package relationships). app_id 0 is the platform-account relationship,
	// another app_id a game relationship in that application; each side of a pair has its own row.
	`
CREATE TABLE relationships (
	user_id INTEGER NOT NULL,
	peer_id INTEGER NOT NULL,
	app_id INTEGER NOT NULL,
	type INTEGER NOT NULL,
	spam INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, app_id, peer_id)
);
CREATE INDEX relationships_peer ON relationships(peer_id);

CREATE TABLE user_settings (
	user_id INTEGER PRIMARY KEY,
	custom_status_privacy INTEGER NOT NULL DEFAULT 0
);
`,
	// 7: the user a guild invite was made for (lobby channel invites, rule LOB-5); 0 is anyone.
	`
ALTER TABLE guild_invites ADD COLUMN target_user_id INTEGER NOT NULL DEFAULT 0;
`,
	// 8: the enforced nonce a lobby message was sent with (NULL for none), so that a send repeated
	// across a restart of the service finds the first message.
	`
ALTER TABLE lobby_messages ADD COLUMN nonce TEXT;
CREATE INDEX lobby_messages_nonce ON lobby_messages(lobby_id, author_id, nonce) WHERE nonce IS NOT NULL;
`,
	// 9: when the newest message with an enforced nonce was sent, found without a scan.
	`
CREATE INDEX lobby_messages_nonce_time ON lobby_messages(created_at) WHERE nonce IS NOT NULL;
`,
	// 10: what a bot sees of a guild: its features, roles (the @everyone role has the guild's id),
	// the members' roles and profile, channel permission overwrites, and guild channel messages.
	`
ALTER TABLE guilds ADD COLUMN features TEXT NOT NULL DEFAULT '[]';
ALTER TABLE guild_members ADD COLUMN nick TEXT NOT NULL DEFAULT '';
ALTER TABLE guild_members ADD COLUMN avatar TEXT NOT NULL DEFAULT '';
ALTER TABLE guild_members ADD COLUMN banner TEXT NOT NULL DEFAULT '';
ALTER TABLE guild_members ADD COLUMN bio TEXT NOT NULL DEFAULT '';

CREATE TABLE guild_roles (
	id INTEGER PRIMARY KEY,
	guild_id INTEGER NOT NULL,
	name TEXT NOT NULL,
	color INTEGER NOT NULL DEFAULT 0,
	secondary_color INTEGER,
	tertiary_color INTEGER,
	permissions INTEGER NOT NULL DEFAULT 0,
	position INTEGER NOT NULL DEFAULT 0,
	hoist INTEGER NOT NULL DEFAULT 0,
	mentionable INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX guild_roles_guild ON guild_roles(guild_id);

CREATE TABLE guild_member_roles (
	guild_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	role_id INTEGER NOT NULL,
	PRIMARY KEY (guild_id, user_id, role_id)
);

CREATE TABLE channel_overwrites (
	channel_id INTEGER NOT NULL,
	target_id INTEGER NOT NULL,
	type INTEGER NOT NULL,
	allow INTEGER NOT NULL DEFAULT 0,
	deny INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (channel_id, target_id)
);

CREATE TABLE guild_messages (
	id INTEGER PRIMARY KEY,
	channel_id INTEGER NOT NULL,
	guild_id INTEGER NOT NULL,
	author_id INTEGER NOT NULL,
	content TEXT NOT NULL,
	mentions TEXT NOT NULL DEFAULT '[]',
	created_at INTEGER NOT NULL,
	edited_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX guild_messages_channel ON guild_messages(channel_id, id);
`,
	// 11: users and apps (rules USR-2, APP-1, GW-1, CON-1, ST-3): a user's primary guild with a
	// copy of its tag, which PutGuildTag keeps current; guild tags; the application's flags and
	// its channel obfuscation bot setting; users' connections; SKUs and their subscriptions.
	`
ALTER TABLE users ADD COLUMN primary_guild_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN primary_guild_enabled INTEGER;
ALTER TABLE users ADD COLUMN primary_guild_tag TEXT;
ALTER TABLE users ADD COLUMN primary_guild_badge TEXT;
CREATE INDEX users_primary_guild ON users(primary_guild_id) WHERE primary_guild_id != 0;

CREATE TABLE guild_tags (
	guild_id INTEGER PRIMARY KEY,
	tag TEXT NOT NULL,
	badge TEXT
);

ALTER TABLE applications ADD COLUMN flags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE applications ADD COLUMN channel_obfuscation INTEGER NOT NULL DEFAULT 0;

CREATE TABLE connections (
	user_id INTEGER NOT NULL,
	type TEXT NOT NULL,
	id TEXT NOT NULL,
	name TEXT NOT NULL,
	verified INTEGER NOT NULL DEFAULT 0,
	visibility INTEGER NOT NULL DEFAULT 0,
	friend_sync INTEGER NOT NULL DEFAULT 0,
	show_activity INTEGER NOT NULL DEFAULT 0,
	two_way_link INTEGER NOT NULL DEFAULT 0,
	revoked INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, type, id)
);

CREATE TABLE skus (
	id INTEGER PRIMARY KEY,
	app_id INTEGER NOT NULL,
	type INTEGER NOT NULL,
	name TEXT NOT NULL,
	slug TEXT NOT NULL,
	flags INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);
CREATE INDEX skus_app ON skus(app_id);

CREATE TABLE subscriptions (
	id INTEGER PRIMARY KEY,
	sku_id INTEGER NOT NULL,
	app_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	current_period_start INTEGER NOT NULL,
	current_period_end INTEGER NOT NULL,
	canceled_at INTEGER NOT NULL DEFAULT 0,
	country TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
);
CREATE INDEX subscriptions_sku ON subscriptions(sku_id, id);
`,
	// 12: voice channel statuses (rule VCS-1) with the start of the channel's voice session, and
	// the guild audit log (rule AUD-1); options is the entry's JSON options object.
	`
CREATE TABLE voice_channel_status (
	channel_id INTEGER PRIMARY KEY,
	guild_id INTEGER NOT NULL,
	status TEXT NOT NULL DEFAULT '',
	voice_start_time INTEGER NOT NULL DEFAULT 0,
	updated_at INTEGER NOT NULL
);
CREATE INDEX voice_channel_status_guild ON voice_channel_status(guild_id);

CREATE TABLE audit_log (
	id INTEGER PRIMARY KEY,
	guild_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	target_id INTEGER NOT NULL,
	action_type INTEGER NOT NULL,
	options TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL
);
CREATE INDEX audit_log_guild ON audit_log(guild_id, id);
`,
	// 13: pinned messages of guild channels (rule PIN-1), newest pin first; a message's pin goes
	// with it.
	`
CREATE TABLE guild_pins (
	channel_id INTEGER NOT NULL,
	message_id INTEGER NOT NULL,
	pinned_at INTEGER NOT NULL,
	PRIMARY KEY (channel_id, message_id)
);
CREATE INDEX guild_pins_time ON guild_pins(channel_id, pinned_at);
`,
	// 14: the search index of guild messages (rule GLD-3). A guild is indexed from the moment
	// IndexGuildMessages copies its messages into guild_message_fts (its row in guild_search);
	// from then on the triggers keep its entries current.
	`
CREATE VIRTUAL TABLE guild_message_fts USING fts5(content, tokenize='unicode61');
CREATE TABLE guild_search (
	guild_id INTEGER PRIMARY KEY,
	indexed_at INTEGER NOT NULL
);
CREATE TRIGGER guild_message_fts_insert AFTER INSERT ON guild_messages
WHEN EXISTS (SELECT 1 FROM guild_search WHERE guild_id=new.guild_id) BEGIN
	INSERT INTO guild_message_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER guild_message_fts_update AFTER UPDATE OF content ON guild_messages
WHEN EXISTS (SELECT 1 FROM guild_search WHERE guild_id=new.guild_id) BEGIN
	DELETE FROM guild_message_fts WHERE rowid=old.id;
	INSERT INTO guild_message_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER guild_message_fts_delete AFTER DELETE ON guild_messages BEGIN
	DELETE FROM guild_message_fts WHERE rowid=old.id;
END;
`,
	// 15: replies and forwards of guild messages (rule FWD-1): the message a message replies to
	// or forwards (ref_type NULL for a plain message), and a forward's snapshot of it (JSON).
	`
ALTER TABLE guild_messages ADD COLUMN ref_type INTEGER;
ALTER TABLE guild_messages ADD COLUMN ref_message_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE guild_messages ADD COLUMN ref_channel_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE guild_messages ADD COLUMN ref_guild_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE guild_messages ADD COLUMN snapshot TEXT;
`,
	// 16: guild channel invites of bots (rules INVT-1, INVT-2, INVT-3): the target users of an
	// invite move from target_user_id to their own table (targeted marks an invite only they may
	// accept, even when its list is empty); the roles given on acceptance (a JSON array of ids);
	// temporary membership; and each invite's latest target-users upload job (user_ids, a JSON
	// array, is kept while it is processing).
	`
CREATE TABLE guild_invite_targets (
	code TEXT NOT NULL,
	user_id INTEGER NOT NULL,
	PRIMARY KEY (code, user_id)
) WITHOUT ROWID;
ALTER TABLE guild_invites ADD COLUMN targeted INTEGER NOT NULL DEFAULT 0;
INSERT INTO guild_invite_targets (code, user_id) SELECT code, target_user_id FROM guild_invites WHERE target_user_id != 0;
UPDATE guild_invites SET targeted = 1 WHERE target_user_id != 0;
ALTER TABLE guild_invites DROP COLUMN target_user_id;
ALTER TABLE guild_invites ADD COLUMN role_ids TEXT NOT NULL DEFAULT '[]';
ALTER TABLE guild_invites ADD COLUMN temporary INTEGER NOT NULL DEFAULT 0;
CREATE INDEX guild_invites_channel ON guild_invites(channel_id, created_at);

CREATE TABLE guild_invite_jobs (
	code TEXT PRIMARY KEY,
	seq INTEGER NOT NULL,
	status INTEGER NOT NULL,
	user_ids TEXT NOT NULL DEFAULT '[]',
	total_users INTEGER NOT NULL,
	processed_users INTEGER NOT NULL DEFAULT 0,
	error_message TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	completed_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX guild_invite_jobs_processing ON guild_invite_jobs(created_at) WHERE status = 1;
`,
	// 17: attachments of guild messages (rules ATT-1, ATT-2, LIM-1): metadata and bytes (data
	// last, so that reading the metadata does not read the blob); a message's attachments go
	// with it.
	`
CREATE TABLE guild_attachments (
	id INTEGER PRIMARY KEY,
	message_id INTEGER NOT NULL,
	channel_id INTEGER NOT NULL,
	position INTEGER NOT NULL,
	filename TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	content_type TEXT NOT NULL,
	size INTEGER NOT NULL,
	width INTEGER NOT NULL DEFAULT 0,
	height INTEGER NOT NULL DEFAULT 0,
	flags INTEGER NOT NULL DEFAULT 0,
	data BLOB NOT NULL
);
CREATE INDEX guild_attachments_message ON guild_attachments(message_id, position);
CREATE TRIGGER guild_attachments_delete AFTER DELETE ON guild_messages BEGIN
	DELETE FROM guild_attachments WHERE message_id=old.id;
END;
`,
	// 18: applications' commands (rule CMD-1), one JSON document per application and guild (0:
	// global), read and written whole by package interactions.
	`
CREATE TABLE application_commands (
	app_id INTEGER NOT NULL,
	guild_id INTEGER NOT NULL,
	commands TEXT NOT NULL,
	PRIMARY KEY (app_id, guild_id)
);
`,
	// 19: settings of guild channels set by Modify Channel (rule VER-1): slowmode interval in
	// seconds and topic.
	`
CREATE TABLE guild_channel_settings (
	channel_id INTEGER PRIMARY KEY,
	rate_limit_per_user INTEGER NOT NULL DEFAULT 0,
	topic TEXT NOT NULL DEFAULT ''
);
`,
	// 20: custom emoji and scheduled events of guilds (rules VER-1, ERR-1); an emoji keeps the
	// hash of its image only. end_at 0 is none.
	`
CREATE TABLE guild_emojis (
	id INTEGER PRIMARY KEY,
	guild_id INTEGER NOT NULL,
	name TEXT NOT NULL,
	image TEXT NOT NULL,
	animated INTEGER NOT NULL DEFAULT 0,
	creator_id INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX guild_emojis_guild ON guild_emojis(guild_id);
CREATE TABLE guild_scheduled_events (
	id INTEGER PRIMARY KEY,
	guild_id INTEGER NOT NULL,
	channel_id INTEGER NOT NULL DEFAULT 0,
	creator_id INTEGER NOT NULL,
	name TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	privacy_level INTEGER NOT NULL,
	status INTEGER NOT NULL,
	entity_type INTEGER NOT NULL,
	location TEXT NOT NULL DEFAULT '',
	start_at INTEGER NOT NULL,
	end_at INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);
CREATE INDEX guild_scheduled_events_guild ON guild_scheduled_events(guild_id);
`,
	// 21: when each guild member was last seen (rule GLD-2, prune): its messages in the guild
	// and its gateway sessions.
	`
CREATE TABLE guild_member_activity (
	guild_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	seen_at INTEGER NOT NULL,
	PRIMARY KEY (guild_id, user_id)
) WITHOUT ROWID;
`,
	// 22: token grants (RFC 9700): the tokens issued from one authorization code or device
	// approval and their rotations form a grant, revoked whole when its code is replayed or a
	// used refresh token comes back. A used refresh token is kept (used_at) to recognise reuse.
	`
CREATE TABLE token_grants (
	id INTEGER PRIMARY KEY,
	app_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER NOT NULL DEFAULT 0
);
ALTER TABLE tokens ADD COLUMN grant_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN used_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tokens_grant ON tokens(grant_id) WHERE grant_id <> 0;
ALTER TABLE auth_codes ADD COLUMN grant_id INTEGER NOT NULL DEFAULT 0;
`,
	// 23: claims of queued work (webhook deliveries, target-users jobs): until when a node has
	// taken it (Unix nanoseconds; 0 unclaimed). SQLite, one process, never claims.
	`
ALTER TABLE webhook_deliveries ADD COLUMN claimed_until INTEGER NOT NULL DEFAULT 0;
ALTER TABLE guild_invite_jobs ADD COLUMN claimed_until INTEGER NOT NULL DEFAULT 0;
`,
	// 24: the operator console (package console): operators, separate from players, with a
	// role; their signed-in sessions; and the audit log of what they did.
	`
CREATE TABLE operators (
	id INTEGER PRIMARY KEY,
	username TEXT NOT NULL,
	username_key TEXT NOT NULL UNIQUE,
	password_hash BLOB NOT NULL,
	role TEXT NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE TABLE operator_sessions (
	hash BLOB PRIMARY KEY,
	operator_id INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
);
CREATE TABLE operator_actions (
	id INTEGER PRIMARY KEY,
	operator_id INTEGER NOT NULL,
	operator TEXT NOT NULL,
	action TEXT NOT NULL,
	target TEXT NOT NULL,
	detail TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
);
CREATE INDEX operator_actions_created ON operator_actions(created_at);
CREATE INDEX webhook_deliveries_app ON webhook_deliveries(app_id, created_at);
`,
	// 25: the node registry: each node's heartbeat row, read by the console's cluster page;
	// and a guild's recent messages across its channels, for the console's guild page.
	`
CREATE TABLE nodes (
	id INTEGER PRIMARY KEY,
	address TEXT NOT NULL,
	started_at INTEGER NOT NULL,
	sessions INTEGER NOT NULL,
	calls INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX guild_messages_guild ON guild_messages(guild_id, id);
`,
	// 26: shared state (shared.go): fixed-window counters (rate limits, bot session starts,
	// member requests, slowmode) and sign-in failures, which every node on the database counts
	// together.
	`
CREATE TABLE rate_windows (
	key TEXT PRIMARY KEY,
	start_at INTEGER NOT NULL,
	ends_at INTEGER NOT NULL,
	hits INTEGER NOT NULL
);
CREATE INDEX rate_windows_ends ON rate_windows(ends_at);
CREATE TABLE login_failures (
	key TEXT NOT NULL,
	at INTEGER NOT NULL
);
CREATE INDEX login_failures_key ON login_failures(key, at);
CREATE INDEX login_failures_at ON login_failures(at);
`,
	// 27: pending interactions and open modals (package interactions), which the node that
	// answers one may not be the node that made it.
	`
CREATE TABLE pending_interactions (
	id INTEGER PRIMARY KEY,
	app_id INTEGER NOT NULL,
	bot_user_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	channel_id INTEGER NOT NULL,
	kind INTEGER NOT NULL,
	token_hash BLOB NOT NULL,
	meta TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	answered INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX pending_interactions_created ON pending_interactions(created_at);
CREATE TABLE open_modals (
	id INTEGER PRIMARY KEY,
	app_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	guild_id INTEGER NOT NULL,
	channel_id INTEGER NOT NULL,
	custom_id TEXT NOT NULL,
	fields TEXT NOT NULL,
	opened_at INTEGER NOT NULL
);
CREATE INDEX open_modals_opened ON open_modals(opened_at);
`,
	// 28: a member's last message in a guild, for prune (GuildMembersLastSeen), read from the
	// messages instead of an activity row written at every send (rows written so far stay).
	`
CREATE INDEX guild_messages_author ON guild_messages(guild_id, author_id, created_at);
`,
	// 29: attachments uploaded a chunk at a time (store.AttachmentChunk), never whole in memory;
	// the data of older ones stays in guild_attachments.
	`
CREATE TABLE guild_attachment_chunks (
	attachment_id INTEGER NOT NULL,
	seq INTEGER NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (attachment_id, seq)
) WITHOUT ROWID;
CREATE TRIGGER guild_attachment_chunks_delete AFTER DELETE ON guild_attachments BEGIN
	DELETE FROM guild_attachment_chunks WHERE attachment_id=old.id;
END;
`,
	// 30: the interaction a guild message answers (package messages' JSON: its message type and
	// interaction_metadata); NULL for other messages.
	`
ALTER TABLE guild_messages ADD COLUMN interaction TEXT;
`,
	// 31: temporary guild membership: a member who joined through a temporary invite (removed
	// when they disconnect without a role).
	`
ALTER TABLE guild_members ADD COLUMN temporary INTEGER NOT NULL DEFAULT 0;
`,
	// 32: replies in DM channels: the message a direct message answers (0 for none).
	`
ALTER TABLE dm_messages ADD COLUMN ref_message_id INTEGER NOT NULL DEFAULT 0;
`,
	// 33: pins of DM channels, as guild_pins.
	`
CREATE TABLE dm_pins (
	channel_id INTEGER NOT NULL,
	message_id INTEGER NOT NULL,
	pinned_at INTEGER NOT NULL,
	PRIMARY KEY (channel_id, message_id)
);
CREATE INDEX dm_pins_time ON dm_pins(channel_id, pinned_at);
`,
	// 34: the state of an interaction past its initial response (package interactions), which
	// any node may serve: the type of an autocomplete interaction's focused option, a deferral
	// (type 5) until its message comes and the flags it gave, the original response's message;
	// the messages of an interaction (original and follow-ups; an ephemeral one kept whole here,
	// as JSON, since only the invoking user's sessions have it); the lookup by token hash of the
	// interaction webhook routes.
	`
ALTER TABLE pending_interactions ADD COLUMN focus_type INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pending_interactions ADD COLUMN deferred INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pending_interactions ADD COLUMN defer_flags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pending_interactions ADD COLUMN original_id INTEGER NOT NULL DEFAULT 0;
CREATE INDEX pending_interactions_token ON pending_interactions(token_hash);
CREATE TABLE interaction_messages (
	interaction_id INTEGER NOT NULL,
	message_id INTEGER NOT NULL,
	ephemeral TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (interaction_id, message_id)
);
`,
	// 35: the cluster-wide order locks of PostgreSQL's OrderLock, kept so that the two schemas
	// follow one another; SQLite's order lock holds nothing (one node orders its own commits).
	`
CREATE TABLE order_locks (
	key TEXT PRIMARY KEY,
	last_id INTEGER NOT NULL
);
`,
	// 36: nothing: PostgreSQL's 16 notifies the changes of applications and authorizations to
	// the other nodes' memos; SQLite has one node, whose memo sees every write.
	`SELECT 1`,
	// 37: the node registry keeps each node's life (its process; a restarted node has a new
	// one) and which node took its sessions over once it was found down (0: none).
	`
ALTER TABLE nodes ADD COLUMN life TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN down_by INTEGER NOT NULL DEFAULT 0;
`,
	// 38: the transactional outbox (outbox.go): events stored with the change they tell of,
	// published on a cluster's bus after the commit (SQLite serves one node: kept so that the
	// two schemas follow one another).
	`
CREATE TABLE outbox (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	key TEXT NOT NULL,
	data BLOB NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX outbox_key ON outbox(key, id);
CREATE INDEX outbox_created ON outbox(created_at);
`,
	// 39 (PostgreSQL's 19): PostgreSQL's cache epoch shared by the nodes, kept so that the two
	// schemas follow one another; SQLite's epoch lives in the memo (one process writes the
	// database).
	`
CREATE TABLE cache_epoch (
	id INTEGER PRIMARY KEY,
	n INTEGER NOT NULL
);
INSERT INTO cache_epoch (id, n) VALUES (1, 0);
`,
	// 40 (PostgreSQL's 20): a token carries its row's id (a snowflake) and a secret, of which
	// the hash is kept: a new row goes to the end of the id's key instead of to a random page
	// of a unique index of hashes (a page written per token to the WAL). The tokens issued
	// before keep their hash and are found by it, through a partial index of their own, until
	// they expire (legacy); they get ids below every snowflake (their rowids).
	`
CREATE TABLE tokens_by_id (
	id INTEGER PRIMARY KEY,
	hash BLOB NOT NULL,
	legacy INTEGER NOT NULL DEFAULT 0,
	kind TEXT NOT NULL,
	authorization_id INTEGER NOT NULL,
	app_id INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	scopes TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	grant_id INTEGER NOT NULL DEFAULT 0,
	used_at INTEGER NOT NULL DEFAULT 0
);
INSERT INTO tokens_by_id (id, hash, legacy, kind, authorization_id, app_id, user_id, scopes, expires_at, created_at, grant_id, used_at)
	SELECT rowid, hash, 1, kind, authorization_id, app_id, user_id, scopes, expires_at, created_at, grant_id, used_at FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_by_id RENAME TO tokens;
CREATE UNIQUE INDEX tokens_legacy ON tokens(hash) WHERE legacy = 1;
CREATE INDEX tokens_authorization ON tokens(authorization_id);
CREATE INDEX tokens_grant ON tokens(grant_id) WHERE grant_id <> 0;
`,
	// 41 (PostgreSQL's 21): PostgreSQL's notifications of changed tokens and cache epoch, kept so
	// that the two schemas follow one another (SQLite's memo sees every write of its process).
	`SELECT 1`,
	// 42 (PostgreSQL's 22): the enforced nonces are found through the author's messages of the
	// window (lobby, author, time) instead of by the nonce itself: a random nonce put each message
	// of a commit in another page of the index, a page written to the WAL each, where one
	// author's messages come one after another.
	`
DROP INDEX lobby_messages_nonce;
CREATE INDEX lobby_messages_nonce ON lobby_messages(lobby_id, author_id, created_at) WHERE nonce IS NOT NULL;
`,
	// 43 (PostgreSQL's 23): the newest message with an enforced nonce is read from the messages
	// of the nonce window, found by their ids (snowflakes, which are not older than their
	// messages), instead of from an index of its own: one page fewer written per commit.
	`
DROP INDEX lobby_messages_nonce_time;
`,
	// 44 (PostgreSQL's 24): an outbox row carries the floor of its key that the commit storing it
	// recorded (OrderLock), kept so that the two schemas follow one another; SQLite's order lock
	// records no floor.
	`
ALTER TABLE outbox ADD COLUMN last_id INTEGER NOT NULL DEFAULT 0;
`,
	// 45 (PostgreSQL's 25): an enforced nonce, looked up only for NonceWindow after a lobby
	// service's memory of them starts, is found among the lobby's messages of the window, by
	// their ids (lobby_messages_lobby), instead of from an index of its own that every commit of
	// messages with enforced nonces wrote a page of to the WAL.
	`
DROP INDEX lobby_messages_nonce;
`,
	// 46 (PostgreSQL's 26): PostgreSQL drops its nonce index as SQLite did at 45; nothing to do
	// here, kept so that the two schemas follow one another.
	`SELECT 1`,
}
