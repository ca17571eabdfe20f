package storage

// pgSchemaSQL creates a room's tables inside its own PostgreSQL schema, which
// the connection's search_path names: the tables, columns and indexes of
// schemaSQL (schema version 2), in PostgreSQL's types
// (docs/protocol.md#storage-on-postgresql). The differences: no WITHOUT
// ROWID; events.sequence is a BIGINT; receipts.listable is a STORED
// generated column (PostgreSQL has no virtual ones) holding 1 or 0; and
// every text column compares bytewise (COLLATE "C"), as SQLite's do, so
// listings and cursors order the same on both engines whatever the
// database's locale.
const pgSchemaSQL = `
CREATE TABLE meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT COLLATE "C" NOT NULL);
CREATE TABLE workspace (workspace_id TEXT COLLATE "C" PRIMARY KEY, record TEXT COLLATE "C" NOT NULL);

CREATE TABLE participants (participant_id TEXT COLLATE "C" PRIMARY KEY, record TEXT COLLATE "C" NOT NULL);
CREATE TABLE sessions (
  session_id TEXT COLLATE "C" PRIMARY KEY,
  participant_id TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL,
  started_at TEXT COLLATE "C" NOT NULL,
  record TEXT COLLATE "C" NOT NULL
);
CREATE INDEX sessions_by_state ON sessions(state, started_at, session_id);
CREATE TABLE intents (session_id TEXT COLLATE "C" PRIMARY KEY, record TEXT COLLATE "C" NOT NULL);

CREATE TABLE eph_participants (participant_id TEXT COLLATE "C" PRIMARY KEY, record TEXT COLLATE "C" NOT NULL);
CREATE TABLE eph_sessions (
  session_id TEXT COLLATE "C" PRIMARY KEY,
  participant_id TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL,
  started_at TEXT COLLATE "C" NOT NULL,
  record TEXT COLLATE "C" NOT NULL
);
CREATE INDEX eph_sessions_by_state ON eph_sessions(state, started_at, session_id);
CREATE TABLE eph_intents (session_id TEXT COLLATE "C" PRIMARY KEY, record TEXT COLLATE "C" NOT NULL);

CREATE TABLE claims (
  claim_id TEXT COLLATE "C" PRIMARY KEY,
  owner_session_id TEXT COLLATE "C" NOT NULL,
  resource TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL,
  record TEXT COLLATE "C" NOT NULL
);
CREATE INDEX claims_by_owner ON claims(owner_session_id);

CREATE TABLE messages (
  message_id TEXT COLLATE "C" PRIMARY KEY,
  thread_id TEXT COLLATE "C" NOT NULL,
  from_participant_id TEXT COLLATE "C" NOT NULL,
  client_message_id TEXT COLLATE "C" NOT NULL,
  kind TEXT COLLATE "C" NOT NULL,
  obligation TEXT COLLATE "C" NOT NULL,
  sent_at TEXT COLLATE "C" NOT NULL,
  decision_head INTEGER NOT NULL DEFAULT 1,
  record TEXT COLLATE "C" NOT NULL,
  UNIQUE (from_participant_id, client_message_id)
);
CREATE INDEX messages_by_time ON messages(sent_at DESC, message_id DESC);
CREATE INDEX messages_by_kind ON messages(kind, sent_at DESC, message_id DESC);
CREATE INDEX messages_by_thread ON messages(thread_id);

CREATE TABLE receipts (
  message_id TEXT COLLATE "C" NOT NULL REFERENCES messages(message_id),
  recipient_participant_id TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL,
  sent_at TEXT COLLATE "C" NOT NULL,
  kind TEXT COLLATE "C" NOT NULL,
  obligation TEXT COLLATE "C" NOT NULL,
  decision_head INTEGER NOT NULL DEFAULT 1,
  listable INTEGER GENERATED ALWAYS AS (
    CASE WHEN decision_head = 1 AND (state IN ('queued', 'offered') OR (state = 'retrieved' AND obligation <> 'none')) THEN 1 ELSE 0 END
  ) STORED,
  record TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (message_id, recipient_participant_id)
);
CREATE INDEX receipts_inbox ON receipts(recipient_participant_id, listable, sent_at DESC, message_id DESC);
CREATE INDEX receipts_all ON receipts(recipient_participant_id, sent_at DESC, message_id DESC);
CREATE INDEX receipts_outstanding ON receipts(message_id) WHERE state <> 'acknowledged' AND obligation <> 'none';
CREATE INDEX receipts_queued ON receipts(recipient_participant_id, state, sent_at DESC, message_id DESC, kind) WHERE state = 'queued';
CREATE INDEX receipts_owed ON receipts(recipient_participant_id, sent_at DESC, message_id DESC) WHERE state <> 'acknowledged' AND obligation <> 'none';

CREATE TABLE decision_links (
  from_id TEXT COLLATE "C" NOT NULL REFERENCES messages(message_id),
  to_id TEXT COLLATE "C" NOT NULL REFERENCES messages(message_id),
  action TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (from_id, to_id)
);
CREATE INDEX decision_links_by_target ON decision_links(to_id, from_id);

CREATE TABLE events (
  sequence BIGINT PRIMARY KEY,
  event_id TEXT COLLATE "C" NOT NULL UNIQUE,
  type TEXT COLLATE "C" NOT NULL,
  record TEXT COLLATE "C" NOT NULL
);

CREATE TABLE session_bindings (
  binding_key TEXT COLLATE "C" PRIMARY KEY,
  session_id TEXT COLLATE "C" NOT NULL,
  record TEXT COLLATE "C" NOT NULL
);
`

// pgQueryDecisionGroup is queryDecisionGroup for PostgreSQL, whose recursive
// part may name the group only once: one step follows a link either way.
const pgQueryDecisionGroup = `WITH RECURSIVE grp(id) AS (
		SELECT CAST(? AS TEXT) COLLATE "C"
		UNION SELECT CASE WHEN l.from_id = grp.id THEN l.to_id ELSE l.from_id END
		FROM decision_links l JOIN grp ON l.from_id = grp.id OR l.to_id = grp.id
	)
	SELECT from_id, to_id, action FROM decision_links WHERE from_id IN (SELECT id FROM grp) ORDER BY from_id, to_id`
