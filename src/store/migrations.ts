// The schema of both backends, version by version (applied by src/store/migration-runner.ts).
// Append only: a released migration is never edited, a change is a new version.

export interface Migration {
  readonly version: number
  readonly name: string
  readonly sqlite: string
  readonly postgres: string
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'create plants',
    sqlite: `CREATE TABLE plants (
               id   INTEGER PRIMARY KEY,
               name TEXT NOT NULL,
               tag  TEXT
             ) STRICT`,
    postgres: `CREATE TABLE plants (
                 id   bigint PRIMARY KEY,
                 name text NOT NULL,
                 tag  text
               )`,
  },
  {
    // Each plant becomes the JSON document of its declared properties, so that a property added
    // to openapi.yaml is stored with no new column. A plant stored without a tag has no tag key.
    version: 2,
    name: 'store each plant as its JSON document',
    sqlite: `CREATE TABLE plant_documents (
               id       INTEGER PRIMARY KEY,
               document TEXT NOT NULL
             ) STRICT;
             INSERT INTO plant_documents (id, document)
               SELECT id, CASE WHEN tag IS NULL THEN json_object('name', name)
                               ELSE json_object('name', name, 'tag', tag) END
               FROM plants;
             DROP TABLE plants;
             ALTER TABLE plant_documents RENAME TO plants`,
    postgres: `ALTER TABLE plants ADD COLUMN document jsonb;
               UPDATE plants SET document = jsonb_strip_nulls(jsonb_build_object('name', name, 'tag', tag));
               ALTER TABLE plants ALTER COLUMN document SET NOT NULL, DROP COLUMN name, DROP COLUMN tag`,
  },
  {
    // Managed API tokens (src/store/api-token-store.ts): the SHA-256 digest of each, never the
    // token. A name is unique among the tokens not revoked, so a revoked token's name can be
    // given again while the revoked one stays listed.
    // SQLite keeps times as ISO-8601 UTC text to the millisecond, as schema_migrations does, so
    // a person reading the file sees when a token expires. The CHECKs hold every time to the
    // one fixed-width form Date.toISOString gives for years 0 to 9999, in which text order is
    // time order: recordUse's `last_used_at < ?` and the list's ORDER BY compare text.
    version: 3,
    name: 'create api_tokens',
    sqlite: `CREATE TABLE api_tokens (
               id           INTEGER PRIMARY KEY,
               name         TEXT NOT NULL,
               digest       BLOB NOT NULL UNIQUE CHECK (length(digest) = 32),
               created_at   TEXT NOT NULL CHECK (created_at IS strftime('%Y-%m-%dT%H:%M:%fZ', created_at)),
               expires_at   TEXT CHECK (expires_at IS strftime('%Y-%m-%dT%H:%M:%fZ', expires_at)),
               last_used_at TEXT CHECK (last_used_at IS strftime('%Y-%m-%dT%H:%M:%fZ', last_used_at)),
               revoked_at   TEXT CHECK (revoked_at IS strftime('%Y-%m-%dT%H:%M:%fZ', revoked_at))
             ) STRICT;
             CREATE UNIQUE INDEX api_tokens_active_name ON api_tokens (name) WHERE revoked_at IS NULL`,
    postgres: `CREATE TABLE api_tokens (
                 id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                 name         text NOT NULL,
                 digest       bytea NOT NULL UNIQUE CHECK (octet_length(digest) = 32),
                 created_at   timestamptz NOT NULL,
                 expires_at   timestamptz,
                 last_used_at timestamptz,
                 revoked_at   timestamptz
               );
               CREATE UNIQUE INDEX api_tokens_active_name ON api_tokens (name) WHERE revoked_at IS NULL`,
  },
  {
    // The roles a managed token holds, of those openapi.yaml's security requirements name. NULL
    // is every role: the tokens issued before roles keep doing all they could, and so does a
    // token issued without naming any. SQLite keeps the names space-separated, as a scope is
    // written (RFC 6749: a role name holds no space).
    version: 4,
    name: 'api token roles',
    sqlite: 'ALTER TABLE api_tokens ADD COLUMN roles TEXT',
    postgres: 'ALTER TABLE api_tokens ADD COLUMN roles text[]',
  },
  {
    // Webhooks (src/webhooks/): the endpoints consumers register, and the transactional outbox,
    // one row per message an endpoint is owed, written in the batch that commits the change it
    // tells of and deleted once delivered. Times are milliseconds since the Unix epoch. The
    // endpoint's lease says which instance delivers its messages, and until when.
    // A message is due at next_attempt_at; NULL is a message that failed every attempt, kept so
    // that it is counted and seen.
    version: 5,
    name: 'webhook endpoints and their outbox',
    sqlite: `CREATE TABLE webhook_endpoints (
               id                    TEXT PRIMARY KEY,
               url                   TEXT NOT NULL,
               events                TEXT,
               secret                TEXT NOT NULL,
               previous_secret       TEXT,
               previous_secret_until INTEGER,
               created_at            INTEGER NOT NULL,
               disabled_at           INTEGER,
               disabled_reason       TEXT,
               failing_since         INTEGER,
               last_failure_at       INTEGER,
               last_failure_reason   TEXT,
               lease_owner           TEXT,
               lease_until           INTEGER
             ) STRICT;
             CREATE TABLE webhook_messages (
               seq             INTEGER PRIMARY KEY,
               endpoint_id     TEXT NOT NULL,
               message_id      TEXT NOT NULL,
               event           TEXT NOT NULL,
               body            TEXT NOT NULL,
               traceparent     TEXT,
               committed_at    INTEGER NOT NULL,
               attempts        INTEGER NOT NULL DEFAULT 0,
               next_attempt_at INTEGER
             ) STRICT;
             CREATE INDEX webhook_messages_due ON webhook_messages (endpoint_id, next_attempt_at)`,
    postgres: `CREATE TABLE webhook_endpoints (
                 id                    uuid PRIMARY KEY,
                 url                   text NOT NULL,
                 events                text[],
                 secret                text NOT NULL,
                 previous_secret       text,
                 previous_secret_until bigint,
                 created_at            bigint NOT NULL,
                 disabled_at           bigint,
                 disabled_reason       text,
                 failing_since         bigint,
                 last_failure_at       bigint,
                 last_failure_reason   text,
                 lease_owner           text,
                 lease_until           bigint
               );
               CREATE TABLE webhook_messages (
                 seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                 endpoint_id     uuid NOT NULL,
                 message_id      text NOT NULL,
                 event           text NOT NULL,
                 body            text NOT NULL,
                 traceparent     text,
                 committed_at    bigint NOT NULL,
                 attempts        integer NOT NULL DEFAULT 0,
                 next_attempt_at bigint
               );
               CREATE INDEX webhook_messages_due ON webhook_messages (endpoint_id, next_attempt_at, seq)`,
  },
  {
    // SQLite only. A batch's messages are written as one bundle per webhook and endpoint: the
    // plants' ids and documents, and what makes each message's id, the rest of its body coming
    // from the bundle's event and commit time. A message row and its index entry per create made
    // each commit write several more pages: the outbox cost a create more than its plant did.
    // The bundles are unpacked into webhook_messages by the instance delivering them, before it
    // reads what is due. PostgreSQL's creates are bound by its own processes, not by the pages a
    // commit writes, and it keeps writing a row per message: nothing changes there. A release
    // before this one does not know the bundles: rolled back to, it would neither send nor count them.
    version: 6,
    name: 'webhook messages written a batch at a time (SQLite)',
    sqlite: `CREATE TABLE webhook_message_bundles (
               seq           INTEGER PRIMARY KEY,
               endpoint_id   TEXT NOT NULL,
               event         TEXT NOT NULL,
               id_prefix     TEXT NOT NULL,
               message_count INTEGER NOT NULL,
               committed_at  INTEGER NOT NULL,
               due_at        INTEGER NOT NULL,
               -- Last: a count read past a value that overflows its page reads the overflow too.
               messages      TEXT NOT NULL
             ) STRICT;
             CREATE INDEX webhook_message_bundles_endpoint ON webhook_message_bundles (endpoint_id, seq)`,
    postgres: '',
  },
  {
    // PostgreSQL too writes a batch of creates' messages as one bundle per webhook and endpoint,
    // in the batch's one statement (src/store/postgres/postgres-outbox-writes.ts): a row per
    // message, each with its body, took PostgreSQL 2.5 times as long per create as the plant
    // alone, on a machine whose cores it shares with the service. The ids, documents and traces
    // of the plants are kept as the create sent them; a message's id and body are made when the
    // bundle is unpacked, as on SQLite. A release before this one does not know the bundles:
    // rolled back to, or holding an endpoint's lease beside this one, it neither sends nor counts
    // them (docs/postgresql.md).
    version: 7,
    name: 'webhook messages written a batch at a time (PostgreSQL)',
    sqlite: '',
    postgres: `CREATE TABLE webhook_message_bundles (
                 seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                 endpoint_id   uuid NOT NULL,
                 event         text NOT NULL,
                 id_prefix     text NOT NULL,
                 message_count integer NOT NULL,
                 committed_at  bigint NOT NULL,
                 due_at        bigint NOT NULL,
                 plant_ids     bigint[] NOT NULL,
                 documents     text[] NOT NULL,
                 traceparents  text[] NOT NULL
               );
               CREATE INDEX webhook_message_bundles_endpoint ON webhook_message_bundles (endpoint_id, seq)`,
  },
  {
    // An endpoint's rest (after five failures in a row, or as a Retry-After asked) is kept with
    // the endpoint, not only in the memory of the instance holding its lease: one that takes the
    // lease over after a crash rests the endpoint as long as was asked, and counts its failures
    // in a row on from where they were. A release before this one neither writes nor clears them,
    // so each is stamped with the failure that wrote it (rest_recorded_at): a lease reads them only
    // while that is still the endpoint's last failure and the endpoint still fails.
    version: 8,
    name: "webhook endpoints' rest",
    sqlite: `ALTER TABLE webhook_endpoints ADD COLUMN failures_in_a_row INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE webhook_endpoints ADD COLUMN resting_until INTEGER;
             ALTER TABLE webhook_endpoints ADD COLUMN rest_recorded_at INTEGER`,
    postgres: `ALTER TABLE webhook_endpoints ADD COLUMN failures_in_a_row integer NOT NULL DEFAULT 0,
                 ADD COLUMN resting_until bigint, ADD COLUMN rest_recorded_at bigint`,
  },
  {
    // A message keeps what it tells of, as the store keeps it: the plant's id and document; its
    // body is composed from them, the event and the commit's time by the webhooks
    // (src/webhooks/), the same bytes at every attempt. The rows written before, each with its
    // body, are rewritten so: the body was `{"type":…,"timestamp":…,"data":{"id":<id>,<the
    // document's members>}}`, so the id is the integer after `,"data":{"id":` and the document
    // the members after it; composed again, the body is the one they held, byte for byte. (SQLite
    // adds no column NOT NULL without a default; the store writes both in every row.) A release
    // before this one reads and writes bodies: it cannot run beside this one (upgrade every
    // instance together), nor be rolled back to.
    version: 9,
    name: 'webhook messages keep their plant, not their body',
    sqlite: `ALTER TABLE webhook_messages ADD COLUMN plant_id INTEGER;
             ALTER TABLE webhook_messages ADD COLUMN document TEXT;
             UPDATE webhook_messages SET document = substr(body, instr(body, ',"data":{"id":') + 14);
             UPDATE webhook_messages SET plant_id = CAST(document AS INTEGER), document = CASE WHEN instr(document, ',') = 0 THEN '{}'
               ELSE '{' || substr(document, instr(document, ',') + 1, length(document) - instr(document, ',') - 1) END;
             ALTER TABLE webhook_messages DROP COLUMN body`,
    postgres: `ALTER TABLE webhook_messages ADD COLUMN plant_id bigint, ADD COLUMN document text;
               UPDATE webhook_messages SET document = substr(body, strpos(body, ',"data":{"id":') + 14);
               UPDATE webhook_messages SET plant_id = rtrim(split_part(document, ',', 1), '}')::bigint,
                 document = CASE WHEN strpos(document, ',') = 0 THEN '{}'
                   ELSE '{' || substr(document, strpos(document, ',') + 1, length(document) - strpos(document, ',') - 1) END;
               ALTER TABLE webhook_messages ALTER COLUMN plant_id SET NOT NULL, ALTER COLUMN document SET NOT NULL, DROP COLUMN body`,
  },
]
