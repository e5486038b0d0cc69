import type pg from 'pg'
import { bundledMessageId, MessageIdPrefixes, type OutboxMessage } from '../outbox.js'
import type { PlantRow } from '../plant-store.js'
import type { RunPostgresQuery } from './postgres-api-token-store.js'

// The webhooks' messages of a batch of writes in PostgreSQL, written by the batch's own
// statements, so that a message exists exactly when its change committed (the outbox): a batch
// of creates writes them as bundles (migration 7), which the instance delivering an endpoint's
// messages unpacks into webhook_messages, a message a row, before it reads what is due, so that
// the retries, leases and counts work on rows; a batch with deletes writes the rows itself.

// A pool, or a connection taken from it for a transaction.
export type Queryable = Pick<pg.ClientBase, 'query'>

// A message goes to every enabled endpoint subscribed to its event (events NULL: every one).
const toSubscribedEndpoints = 'JOIN webhook_endpoints e ON e.disabled_at IS NULL AND (e.events IS NULL OR m.event = ANY (e.events))'

// A batch of creates that owes webhooks, in one statement: the plants, and one bundle of the
// messages of those it inserted for each webhook a create sends and each endpoint subscribed to it
// (migration 7), atomic in autocommit. A replay's or a conflict's plant is left out by the join:
// what a batch owes is known only once the plants are in. The documents are sent as text, so
// that a bundle keeps each exactly as the create wrote it (jsonb would respace it). In a
// transaction of its own (BEGIN, the insert, the messages, COMMIT) the batch took four round
// trips where the creates alone take one: creates with an endpoint ran at about a third of their
// rate without.
const insertPlantsWithBundles = `WITH batch AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) WITH ORDINALITY AS b (id, document, traceparent, position)
), inserted AS (
  INSERT INTO plants (id, document)
  SELECT id, document::jsonb FROM batch ORDER BY id
  ON CONFLICT (id) DO NOTHING RETURNING id
), owed AS (
  SELECT count(*)::integer AS message_count, array_agg(b.id ORDER BY b.position) AS plant_ids,
    array_agg(b.document ORDER BY b.position) AS documents, array_agg(b.traceparent ORDER BY b.position) AS traceparents
  FROM batch b JOIN inserted ON inserted.id = b.id
), bundles AS (
  INSERT INTO webhook_message_bundles (endpoint_id, event, id_prefix, message_count, committed_at, due_at, plant_ids, documents, traceparents)
  SELECT e.id, w.event, w.id_prefix, owed.message_count, $6::bigint, $7::bigint, owed.plant_ids, owed.documents, owed.traceparents
  FROM owed CROSS JOIN unnest($4::text[], $5::text[]) AS w (event, id_prefix)
  JOIN webhook_endpoints e ON e.disabled_at IS NULL AND (e.events IS NULL OR w.event = ANY (e.events))
  WHERE owed.message_count > 0
)
SELECT id::text AS id FROM inserted`
// The webhooks' messages of a batch in a transaction (one with deletes).
const insertMessages = `INSERT INTO webhook_messages
  (endpoint_id, message_id, event, plant_id, document, traceparent, committed_at, next_attempt_at)
SELECT e.id, m.message_id, m.event, m.plant_id, m.document, m.traceparent, $7::bigint, m.due_at
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[]) AS m (message_id, event, plant_id, document, traceparent, due_at)
${toSubscribedEndpoints}`

// What a batch of creates owes each plant it inserts: a message of each of these webhooks.
export interface CreatedMessages {
  readonly webhooks: readonly string[]
  readonly committedAt: number
  readonly dueAt: number
  readonly traceparentOf: (plant: PlantRow) => string | undefined
}

const prefixes = new MessageIdPrefixes()

// The ids the statement inserted, as decimal strings, with the bundles of their messages written.
export async function runBatchStatementWithMessages (client: Queryable, plants: readonly PlantRow[], messages: CreatedMessages): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>({
    name: 'insert-plants-with-bundles',
    text: insertPlantsWithBundles,
    values: [
      plants.map(({ id }) => id.toString()),
      plants.map(({ document }) => document),
      plants.map((plant) => messages.traceparentOf(plant) ?? null),
      messages.webhooks,
      // Each statement its own prefixes: one that runs again after a conflict makes new ids.
      messages.webhooks.map(() => prefixes.next()),
      messages.committedAt.toString(),
      messages.dueAt.toString(),
    ],
  })
  return rows.map(({ id }) => id)
}

export async function writeMessages (client: Queryable, messages: readonly OutboxMessage[], committedAt: number): Promise<void> {
  if (messages.length === 0) return
  await client.query(insertMessages, [
    messages.map(({ messageId }) => messageId),
    messages.map(({ event }) => event),
    messages.map(({ plant }) => plant.id.toString()),
    messages.map(({ plant }) => plant.document),
    messages.map(({ traceparent }) => traceparent ?? null),
    messages.map(({ dueAt }) => dueAt.toString()),
    committedAt.toString(),
  ])
}

// A bundle as the unpacking reads it.
interface BundleRecord {
  seq: string
  event: string
  id_prefix: string
  committed_at: string
  due_at: string
  plant_ids: string[]
  documents: string[]
  traceparents: Array<string | null>
}

// Bundles read at a time while unpacking.
const bundlesReadAtOnce = 16

const selectBundles = `SELECT seq, event, id_prefix, committed_at, due_at, plant_ids::text[] AS plant_ids, documents, traceparents
  FROM webhook_message_bundles WHERE endpoint_id = $1 ORDER BY seq LIMIT $2`
// Only the messages of the bundles this statement deleted are inserted: should two instances
// unpack the same bundle (a lease taken over while its holder still ran), one of them moves it.
const moveBundles = `WITH taken AS (
  DELETE FROM webhook_message_bundles WHERE seq = ANY ($1::bigint[]) RETURNING seq
)
INSERT INTO webhook_messages (endpoint_id, message_id, event, plant_id, document, traceparent, committed_at, next_attempt_at)
SELECT $2::uuid, m.message_id, m.event, m.plant_id, m.document, m.traceparent, m.committed_at, m.due_at
FROM unnest($3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::bigint[], $10::bigint[])
  WITH ORDINALITY AS m (bundle_seq, message_id, event, plant_id, document, traceparent, committed_at, due_at, position)
JOIN taken ON taken.seq = m.bundle_seq
ORDER BY m.position`

// Unpacks the endpoint's oldest bundles until at least `atLeast` messages were unpacked or none
// is left. Each move is one statement: atomic, and a bundle is never half unpacked.
export async function unpackBundles (runQuery: RunPostgresQuery, endpointId: string, atLeast: number): Promise<void> {
  let unpacked = 0
  while (unpacked < atLeast) {
    const { rows } = await runQuery<BundleRecord>({ name: 'select-webhook-bundles', text: selectBundles, values: [endpointId, bundlesReadAtOnce] })
    const taken: BundleRecord[] = []
    for (const bundle of rows) {
      if (unpacked >= atLeast) break
      taken.push(bundle)
      unpacked += bundle.plant_ids.length
    }
    if (taken.length === 0) return
    await runQuery({ name: 'unpack-webhook-bundles', text: moveBundles, values: [taken.map(({ seq }) => seq), endpointId, ...messageColumns(taken)] })
    if (rows.length < bundlesReadAtOnce) return
  }
}

// The messages of the bundles, a column each, in order: a message's id is its bundle's prefix and
// its place in it.
function messageColumns (bundles: readonly BundleRecord[]): unknown[] {
  const bundleSeqs: string[] = []
  const messageIds: string[] = []
  const events: string[] = []
  const plantIds: string[] = []
  const documents: string[] = []
  const traceparents: Array<string | null> = []
  const committedAts: string[] = []
  const dueAts: string[] = []
  for (const bundle of bundles) {
    bundle.plant_ids.forEach((id, index) => {
      bundleSeqs.push(bundle.seq)
      messageIds.push(bundledMessageId(bundle.id_prefix, index))
      events.push(bundle.event)
      plantIds.push(id)
      documents.push(bundle.documents[index]!)
      traceparents.push(bundle.traceparents[index] ?? null)
      committedAts.push(bundle.committed_at)
      dueAts.push(bundle.due_at)
    })
  }
  return [bundleSeqs, messageIds, events, plantIds, documents, traceparents, committedAts, dueAts]
}
