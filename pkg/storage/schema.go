package storage

// schemaSQL creates every table of schema version 1. Records are stored whole
// as JSON in a record column; the fields that queries filter or sort on are
// copied into indexed columns (docs/decisions.md#15-storage-layout).
const schemaSQL = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE workspace (workspace_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;

CREATE TABLE participants (participant_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY,
  participant_id TEXT NOT NULL,
  state TEXT NOT NULL,
  started_at TEXT NOT NULL,
  record TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_by_state ON sessions(state, started_at, session_id);
CREATE TABLE intents (session_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;

CREATE TABLE eph_participants (participant_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE eph_sessions (
  session_id TEXT PRIMARY KEY,
  participant_id TEXT NOT NULL,
  state TEXT NOT NULL,
  started_at TEXT NOT NULL,
  record TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX eph_sessions_by_state ON eph_sessions(state, started_at, session_id);
CREATE TABLE eph_intents (session_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;

CREATE TABLE claims (
  claim_id TEXT PRIMARY KEY,
  owner_session_id TEXT NOT NULL,
  resource TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  record TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX claims_by_owner ON claims(owner_session_id);

CREATE TABLE messages (
  message_id TEXT PRIMARY KEY,
  thread_id TEXT NOT NULL,
  from_participant_id TEXT NOT NULL,
  client_message_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  obligation TEXT NOT NULL,
  sent_at TEXT NOT NULL,
  decision_head INTEGER NOT NULL DEFAULT 1,
  record TEXT NOT NULL,
  UNIQUE (from_participant_id, client_message_id)
) WITHOUT ROWID;
CREATE INDEX messages_by_time ON messages(sent_at DESC, message_id DESC);
CREATE INDEX messages_by_kind ON messages(kind, sent_at DESC, message_id DESC);
CREATE INDEX messages_by_thread ON messages(thread_id);

CREATE TABLE receipts (
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  recipient_participant_id TEXT NOT NULL,
  state TEXT NOT NULL,
  sent_at TEXT NOT NULL,
  kind TEXT NOT NULL,
  obligation TEXT NOT NULL,
  decision_head INTEGER NOT NULL DEFAULT 1,
  listable INTEGER GENERATED ALWAYS AS (
    decision_head = 1 AND (state IN ('queued', 'offered') OR (state = 'retrieved' AND obligation <> 'none'))
  ) VIRTUAL,
  record TEXT NOT NULL,
  PRIMARY KEY (message_id, recipient_participant_id)
) WITHOUT ROWID;
CREATE INDEX receipts_inbox ON receipts(recipient_participant_id, listable, sent_at DESC, message_id DESC);
CREATE INDEX receipts_all ON receipts(recipient_participant_id, sent_at DESC, message_id DESC);
CREATE INDEX receipts_outstanding ON receipts(message_id) WHERE state <> 'acknowledged' AND obligation <> 'none';
CREATE INDEX receipts_queued ON receipts(recipient_participant_id, state, sent_at DESC, message_id DESC, kind) WHERE state = 'queued';
CREATE INDEX receipts_owed ON receipts(recipient_participant_id, sent_at DESC, message_id DESC) WHERE state <> 'acknowledged' AND obligation <> 'none';

-- decision_links holds one row per target of a decision change (from the
-- change to the decision it replaces or withdraws), so the connected group of
-- any decision is found from the links alone, walking them either way.
CREATE TABLE decision_links (
  from_id TEXT NOT NULL REFERENCES messages(message_id),
  to_id TEXT NOT NULL REFERENCES messages(message_id),
  action TEXT NOT NULL,
  PRIMARY KEY (from_id, to_id)
) WITHOUT ROWID;
CREATE INDEX decision_links_by_target ON decision_links(to_id, from_id);

CREATE TABLE events (
  sequence INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  record TEXT NOT NULL
);

CREATE TABLE session_bindings (
  binding_key TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  record TEXT NOT NULL
) WITHOUT ROWID;
`

// durableTables lists the tables whose rows are durable history; a lone
// session must leave every one of them empty
// (docs/protocol.md#lazy-materialisation).
var durableTables = []string{"workspace", "participants", "sessions", "intents", "claims", "messages", "receipts", "decision_links", "events"}

// allTables lists every table in a stable order, for fingerprints.
var allTables = []string{"meta", "workspace", "participants", "sessions", "intents", "eph_participants",
	"eph_sessions", "eph_intents", "claims", "messages", "receipts", "decision_links", "events", "session_bindings"}
