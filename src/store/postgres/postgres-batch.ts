import pg from 'pg'
import { unreachable } from '../../errors/unreachable.js'
import { canonicalJson } from '../../int64/canonical-json.js'
import { parseJsonExactly } from '../../json/parse-json-exactly.js'
import type { Outbox, OutboxMessage } from '../outbox.js'
import { changeOfWrite, compareWithStored, type PlantWrite, type StoredPlantCondition, type WriteResult } from '../plant-writes.js'
import { type CreatedMessages, type Queryable, runBatchStatementWithMessages, writeMessages } from './postgres-outbox-writes.js'
import type { PlantRow } from '../plant-store.js'
import { StoreUnavailableError } from '../store-errors.js'
import { afterCommittedStatement, isTransientPostgresError } from './postgres-errors.js'

export const undefinedTable = '42P01'

// Errors raised by the batch's statements, which then wrote nothing: only these may be one
// write's own (a trigger or constraint refusing it), so only these are retried write by write.
const refusedByBatchStatement = new WeakSet<object>()

export function isRefusedByBatchStatement (error: unknown): boolean {
  return refusedByBatchStatement.has(error as object)
}

// One named statement stores a whole batch of plants with distinct ids and returns the ids it
// inserted. It inserts in id order, so two instances storing overlapping ids cannot deadlock.
// Its plan reads no stored rows (ON CONFLICT goes through the primary key's index), so the plan
// the server caches for it after a few runs cannot go stale as the table grows, and planning
// is not paid again at every batch.
const insertPlants = `INSERT INTO plants (id, document)
SELECT * FROM unnest($1::bigint[], $2::jsonb[]) AS batch (id, document) ORDER BY id
ON CONFLICT (id) DO NOTHING RETURNING id::text AS id`
// The plants stored under the ids the batch found taken. A statement of its own, so that it
// sees rows other sessions committed while the insert ran. It is sent unnamed, so the server
// plans it afresh at every run: a plan cached while the table was new and small would read
// with a sequential scan, slower with every plant stored until the table is next analysed.
const selectDocuments = 'SELECT id::text AS id, document::text AS document FROM plants WHERE id = ANY($1::bigint[])'
const deletePlants = 'DELETE FROM plants WHERE id = ANY($1::bigint[]) RETURNING id::text AS id, document::text AS document'
const updatePlant = 'UPDATE plants SET document = $2::jsonb WHERE id = $1'
// The plant a write with a condition reads first, locked until the batch commits.
const selectDocumentForUpdate = 'SELECT document::text AS document FROM plants WHERE id = $1 FOR UPDATE'
// A taken id whose plant is gone by the time it is read (another instance deleted it between
// the two statements) is inserted again; past this many tries the batch gets a 503.
const maxInsertTries = 3

// A batch of creates alone is one insert, in autocommit: durable once it returns, with the
// webhooks' messages of the plants it inserted when it owes any. Any other batch is one
// transaction, in which the writes of each id run in arrival order: the ids created once share
// one insert, those deleted once share one delete, and an id written more than once, an update,
// or a write with a condition on the stored plant, runs its writes one by one. Writes of different ids are independent, so their order between groups
// does not matter. The webhooks' messages of what it created and deleted are written last, in
// the same transaction.
export async function commitWrites (pool: pg.Pool, writes: readonly PlantWrite[], outbox: Outbox): Promise<WriteResult[]> {
  const plants = plantsIfOnlyCreates(writes)
  if (plants !== undefined && !outbox.wants(changeOfWrite.create)) return insertOrCompare(pool, plants)
  const committedAt = Date.now()
  if (plants !== undefined) {
    // The trace of the first write of a plant: the one whose create can store it.
    const traceparents = new Map<PlantRow, string | undefined>()
    writes.forEach((write, index) => { if (!traceparents.has(plants[index]!)) traceparents.set(plants[index]!, write.context?.traceparent) })
    return insertOrCompare(pool, plants, {
      webhooks: outbox.webhooksOf(changeOfWrite.create),
      committedAt,
      dueAt: outbox.firstAttemptAt(committedAt),
      traceparentOf: (plant) => traceparents.get(plant),
    })
  }
  return marked(() => inTransaction(pool, async (client) => {
    const results: WriteResult[] = []
    const deletedDocuments = new Map<string, string>()
    const writesOfId = new Map<bigint, number>()
    for (const write of writes) writesOfId.set(write.id, (writesOfId.get(write.id) ?? 0) + 1)
    const creates = { indexes: [] as number[], plants: [] as PlantRow[] }
    const deletes = { indexes: [] as number[], ids: [] as bigint[] }
    const oneByOne: number[] = []
    writes.forEach((write, index) => {
      if (writesOfId.get(write.id)! > 1 || runsAlone(write)) {
        oneByOne.push(index)
        return
      }
      switch (write.kind) {
        case 'create':
          creates.indexes.push(index)
          creates.plants.push(write)
          return
        case 'update':
          oneByOne.push(index)
          return
        case 'delete':
          deletes.indexes.push(index)
          deletes.ids.push(write.id)
          return
        default: return unreachable(write)
      }
    })
    const created = await insertOrCompare(client, creates.plants)
    creates.indexes.forEach((index, position) => { results[index] = created[position]! })
    const deleted = await deleteAll(client, deletes.ids, deletedDocuments)
    deletes.indexes.forEach((index, position) => { results[index] = deleted[position]! })
    const messages: OutboxMessage[] = []
    for (const index of oneByOne) {
      results[index] = await commitOne(client, writes[index]!, deletedDocuments)
      // Told at once: a later delete of the id in the batch replaces the document it removed.
      messages.push(...messagesOf(outbox, writes[index]!, results[index]!, deletedDocuments, committedAt))
    }
    const toldAlready = new Set(oneByOne)
    writes.forEach((write, index) => {
      if (!toldAlready.has(index)) messages.push(...messagesOf(outbox, write, results[index]!, deletedDocuments, committedAt))
    })
    await writeMessages(client, messages, committedAt)
    return results
  }))
}

// The messages a committed write sends.
function messagesOf (
  outbox: Outbox, write: PlantWrite, result: WriteResult, deletedDocuments: ReadonlyMap<string, string>, committedAt: number
): readonly OutboxMessage[] {
  const traceparent = write.context?.traceparent
  switch (write.kind) {
    case 'create':
      return result === 'created' ? outbox.messagesOf(changeOfWrite.create, write, committedAt, traceparent) : []
    case 'update':
      return result === 'updated' ? outbox.messagesOf(changeOfWrite.update, write, committedAt, traceparent) : []
    case 'delete': {
      const document = deletedDocuments.get(write.id.toString())
      if (result !== 'deleted' || document === undefined) return []
      return outbox.messagesOf(changeOfWrite.delete, { id: write.id, document: canonicalJson(parseJsonExactly(document)) }, committedAt, traceparent)
    }
    default: return unreachable(write)
  }
}

// The first create of each id goes into the insert; a later create of the same id in the batch
// is compared with what the earlier one left stored, as if it had arrived alone just after.
async function insertOrCompare (client: Queryable, plants: readonly PlantRow[], messages?: CreatedMessages): Promise<WriteResult[]> {
  if (plants.length === 0) return []
  const firsts = new Map<bigint, PlantRow>()
  for (const plant of plants) if (!firsts.has(plant.id)) firsts.set(plant.id, plant)
  const insertedIds = new Set<string>()
  const storedById = new Map<string, string>()
  let pending = [...firsts.values()]
  // Once a statement ran (on the pool, on its own: committed), a later failure is not of a batch
  // that reached no primary, which the store may send again.
  let ranOne = false
  try {
    for (let tries = 1; pending.length > 0; tries++) {
      if (tries > maxInsertTries) throw new StoreUnavailableError(1)
      const inserted = messages === undefined
        ? await marked(() => runBatchStatement(client, pending))
        : await marked(() => runBatchStatementWithMessages(client, pending, messages))
      ranOne = true
      for (const id of inserted) insertedIds.add(id)
      const takenIds = pending.map(({ id }) => id.toString()).filter((id) => !insertedIds.has(id))
      if (takenIds.length > 0) {
        const { rows } = await client.query<{ id: string, document: string }>(selectDocuments, [takenIds])
        for (const { id, document } of rows) storedById.set(id, document)
      }
      pending = pending.filter(({ id }) => !insertedIds.has(id.toString()) && !storedById.has(id.toString()))
    }
  } catch (error) {
    throw ranOne ? afterCommittedStatement(error) : error
  }
  return plants.map((plant) => {
    const id = plant.id.toString()
    // Only the first create of an id can have inserted it; the ones after it compare.
    if (insertedIds.delete(id)) {
      storedById.set(id, plant.document)
      return 'created'
    }
    return compareWithStored(plant.document, storedById.get(id))
  })
}

// The ids the statement inserted, as decimal strings.
async function runBatchStatement (client: Queryable, plants: readonly PlantRow[]): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>({
    name: 'insert-plants',
    text: insertPlants,
    values: [plants.map(({ id }) => id.toString()), plants.map(({ document }) => document)],
  })
  return rows.map(({ id }) => id)
}

// The documents of the plants deleted go into deletedDocuments, for their webhooks.
async function deleteAll (client: Queryable, ids: readonly bigint[], deletedDocuments: Map<string, string>): Promise<WriteResult[]> {
  if (ids.length === 0) return []
  const { rows } = await client.query<{ id: string, document: string }>(deletePlants, [ids.map(String)])
  for (const { id, document } of rows) deletedDocuments.set(id, document)
  const deleted = new Set(rows.map(({ id }) => id))
  return ids.map((id) => deleted.has(id.toString()) ? 'deleted' : 'absent')
}

// One write alone, inside the batch's transaction, after the writes of its id before it.
async function commitOne (client: Queryable, write: PlantWrite, deletedDocuments: Map<string, string>): Promise<WriteResult> {
  switch (write.kind) {
    case 'create': return (await insertOrCompare(client, [write]))[0]!
    case 'update': {
      const { rows } = await client.query<{ document: string }>(selectDocumentForUpdate, [write.id.toString()])
      const stored = rows[0]?.document
      if (stored === undefined) return 'absent'
      const canonical = canonicalJson(parseJsonExactly(stored))
      if (write.condition !== undefined && !write.condition(canonical)) return 'condition-failed'
      if (canonical === write.document) return 'unchanged'
      await client.query(updatePlant, [write.id.toString(), write.document])
      return 'updated'
    }
    case 'delete': {
      const refusal = await refusedByCondition(client, write.id, write.condition)
      return refusal ?? (await deleteAll(client, [write.id], deletedDocuments))[0]!
    }
    default: return unreachable(write)
  }
}

// Whether a write runs alone: an update reads the stored plant first, as a write with a condition
// on it does.
function runsAlone (write: PlantWrite): boolean {
  switch (write.kind) {
    case 'create': return false
    case 'update': return true
    case 'delete': return write.condition !== undefined
    default: return unreachable(write)
  }
}

// The stored plant, locked, given to the write's condition in the canonical form the service
// answers it in (and so its ETag is computed from): a refusal, or undefined to go on.
async function refusedByCondition (
  client: Queryable, id: bigint, condition: StoredPlantCondition | undefined
): Promise<'absent' | 'condition-failed' | undefined> {
  if (condition === undefined) return undefined
  const { rows } = await client.query<{ document: string }>(selectDocumentForUpdate, [id.toString()])
  const stored = rows[0]?.document
  if (stored === undefined) return 'absent'
  return condition(canonicalJson(parseJsonExactly(stored))) ? undefined : 'condition-failed'
}

// A client taken from the pool has no error listener of the pool's while it is out: the loss of
// its connection (PostgreSQL killed) would be an unhandled 'error' event that ends the process.
// Here it fails the statement in flight instead, and the client is not given back to the pool.
async function inTransaction<T> (pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let lost: Error | undefined
  const onLost = (error: Error): void => { lost = error }
  client.on('error', onLost)
  let broken: Error | undefined
  try {
    await client.query('BEGIN')
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackFailure: unknown) => {
      broken = rollbackFailure instanceof Error ? rollbackFailure : new Error(String(rollbackFailure))
    })
    throw error
  } finally {
    client.off('error', onLost)
    client.release(lost ?? broken)
  }
}

// A database's refusal of the batch's statements, which wrote nothing, may be one write's own.
async function marked<T> (statements: () => Promise<T>): Promise<T> {
  try {
    return await statements()
  } catch (error) {
    if (error instanceof pg.DatabaseError && !isTransientPostgresError(error) && error.code !== undefinedTable) {
      refusedByBatchStatement.add(error)
    }
    throw error
  }
}

// The plants of a batch of creates alone; undefined for a batch with any other write.
function plantsIfOnlyCreates (writes: readonly PlantWrite[]): PlantRow[] | undefined {
  const plants: PlantRow[] = []
  for (const write of writes) {
    switch (write.kind) {
      case 'create':
        plants.push(write)
        break
      case 'update':
      case 'delete': return undefined
      default: return unreachable(write)
    }
  }
  return plants
}
