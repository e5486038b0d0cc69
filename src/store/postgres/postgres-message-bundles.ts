import { bundledMessageId } from '../outbox.js'
import type { RunPostgresQuery } from './postgres-api-token-store.js'

// The bundles a batch of creates writes (migration 7, src/store/postgres/postgres-outbox-writes.ts)
// are unpacked into webhook_messages, a message a row, by the instance delivering the endpoint's
// messages, before it reads what is due: the retries, leases and counts work on rows as they did.

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
