import { bundledMessageId, MessageIdPrefixes, type Outbox, type PlantChange } from '../outbox.js'
import type { PlantRow } from '../plant-row.js'
import { commitWithoutFsync } from './commit-without-fsync.js'
import type { Database } from './sqlite-driver.js'

interface BundleRecord {
  seq: bigint
  endpoint_id: string
  event: string
  id_prefix: string
  messages: string
  committed_at: bigint
  due_at: bigint
}

// One message of a bundle: the plant's id (its digits), its document, and the trace of the
// request that changed it.
type BundledMessage = [id: string, document: string, traceparent: string | null]

// The changes of one batch in the order they were made, as runs of one kind: a batch that
// creates, deletes and creates one id again sends newPlant, plantDeleted, newPlant, in that order.
export type BatchChanges = Array<{ readonly change: PlantChange, readonly messages: BundledMessage[] }>

// A batch's webhook messages, written as one bundle per webhook and endpoint subscribed to it
// (migration 6): a row with the plants' ids and documents, where a row per message and its index
// entry made each commit write several more pages. The bundles are unpacked into
// webhook_messages, a message a row as before, by the instance delivering the endpoint's messages
// (unpack), so that the retries, leases and counts work on rows as they did.
export class MessageBundles {
  private readonly insertBundle
  private readonly unpackBundles: (endpointId: string, atLeast: number) => void
  private readonly hasBundles
  private readonly prefixes = new MessageIdPrefixes()

  constructor (database: Database) {
    // One bundle for every enabled endpoint subscribed to the event (events NULL: every one).
    this.insertBundle = database.prepare(`INSERT INTO webhook_message_bundles
        (endpoint_id, event, id_prefix, messages, message_count, committed_at, due_at)
      SELECT id, ?, ?, ?, ?, ?, ? FROM webhook_endpoints
      WHERE disabled_at IS NULL AND (events IS NULL OR EXISTS (SELECT 1 FROM json_each(events) WHERE value = ?))`)
    this.hasBundles = database.prepare<[string], unknown>('SELECT 1 FROM webhook_message_bundles WHERE endpoint_id = ? LIMIT 1').pluck()
    const selectBundles = database.prepare<[string, number], BundleRecord>(`SELECT seq, endpoint_id, event, id_prefix, messages, committed_at, due_at
      FROM webhook_message_bundles WHERE endpoint_id = ? ORDER BY seq LIMIT ?`)
    const deleteBundle = database.prepare('DELETE FROM webhook_message_bundles WHERE seq = ?')
    const insertMessage = database.prepare(`INSERT INTO webhook_messages
      (endpoint_id, message_id, event, plant_id, document, traceparent, committed_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
    const unpack = database.transaction((endpointId: string, atLeast: number) => {
      let unpacked = 0
      while (unpacked < atLeast) {
        const bundles = selectBundles.all(endpointId, bundlesReadAtOnce)
        for (const bundle of bundles) {
          if (unpacked >= atLeast) break
          const messages = JSON.parse(bundle.messages) as BundledMessage[]
          messages.forEach(([id, document, traceparent], index) => {
            insertMessage.run(endpointId, bundledMessageId(bundle.id_prefix, index), bundle.event, BigInt(id), document, traceparent, bundle.committed_at, bundle.due_at)
          })
          deleteBundle.run(bundle.seq)
          unpacked += messages.length
        }
        if (bundles.length < bundlesReadAtOnce) break
      }
    })
    // Unpacking commits without waiting for the disk: it moves messages from a bundle to their
    // rows in one transaction, so a power loss that undoes it leaves the bundle, unpacked again
    // with the same ids; and the next commit that waits (a batch of creates, the deletion of
    // delivered messages) makes it durable with everything before it in the log.
    this.unpackBundles = (endpointId, atLeast) => { commitWithoutFsync(database, () => unpack.immediate(endpointId, atLeast)) }
  }

  // The changes of the batch now being committed, gathered as its writes run.
  startBatch (): BatchChanges {
    return []
  }

  add (batch: BatchChanges, change: PlantChange, plant: PlantRow, traceparent: string | undefined): void {
    const message: BundledMessage = [String(plant.id), plant.document, traceparent ?? null]
    const last = batch.at(-1)
    if (last?.change === change) last.messages.push(message)
    else batch.push({ change, messages: [message] })
  }

  // Writes the batch's bundles, in its transaction: one for each webhook a change sends and each
  // endpoint subscribed to it, all of one webhook sharing a prefix, so that a message has the
  // same id at every endpoint.
  write (batch: BatchChanges, outbox: Outbox, committedAt: number): void {
    for (const { change, messages } of batch) {
      const json = JSON.stringify(messages)
      for (const event of outbox.webhooksOf(change)) {
        const prefix = this.prefixes.next()
        this.insertBundle.run(event, prefix, json, messages.length, committedAt, outbox.firstAttemptAt(committedAt), event)
      }
    }
  }

  // Unpacks the endpoint's oldest bundles into message rows until at least `atLeast` messages
  // were unpacked or none is left, in one transaction.
  unpack (endpointId: string, atLeast: number): void {
    if (this.hasBundles.get(endpointId) !== undefined) this.unpackBundles(endpointId, atLeast)
  }
}

// Bundles read at a time while unpacking.
const bundlesReadAtOnce = 16
