import pg from 'pg'
import { compareWithStored, type CreateResult } from '../group-commit.js'
import type { PlantRow } from '../plant-store.js'
import { isTransientPostgresError } from './postgres-errors.js'

export const undefinedTable = '42P01'

// Errors raised by the batch statement itself, which then wrote nothing: only these may be one
// create's own (a trigger or constraint refusing it), so only these are retried create by create.
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

// One insert for the batch, in autocommit: durable once it returns; the ids it found taken are
// then read by a second statement. The first create of each id goes into the insert; a later
// create of the same id in the batch is then compared with what the earlier one left stored,
// as if it had arrived alone just after.
export async function insertOrCompare (pool: pg.Pool, plants: readonly PlantRow[]): Promise<CreateResult[]> {
  const firstOfEachId = firstCreateOfEachId(plants)
  const insertedIds = new Set(await runBatchStatement(pool, firstOfEachId))
  const storedById = new Map<string, string>()
  const takenIds: string[] = []
  for (const plant of firstOfEachId) {
    const id = plant.id.toString()
    if (insertedIds.has(id)) storedById.set(id, plant.document)
    else takenIds.push(id)
  }
  await readStoredDocuments(pool, takenIds, storedById)

  return plants.map((plant) => {
    const id = plant.id.toString()
    // Only the first create of an id can have inserted it; the ones after it compare.
    if (insertedIds.delete(id)) return 'created'
    // Plants are never deleted, so a taken id always has a row.
    const stored = storedById.get(id)
    if (stored === undefined) throw new Error(`plant ${id} was neither inserted nor found`)
    return compareWithStored(plant, stored)
  })
}

// The ids the statement inserted, as decimal strings.
async function runBatchStatement (pool: pg.Pool, plants: readonly PlantRow[]): Promise<string[]> {
  try {
    const { rows } = await pool.query<{ id: string }>({
      name: 'insert-plants',
      text: insertPlants,
      values: [plants.map(({ id }) => id.toString()), plants.map(({ document }) => document)],
    })
    return rows.map(({ id }) => id)
  } catch (error) {
    if (error instanceof pg.DatabaseError && !isTransientPostgresError(error) && error.code !== undefinedTable) {
      refusedByBatchStatement.add(error)
    }
    throw error
  }
}

async function readStoredDocuments (pool: pg.Pool, ids: readonly string[], storedById: Map<string, string>): Promise<void> {
  if (ids.length === 0) return
  const { rows } = await pool.query<{ id: string, document: string }>(selectDocuments, [ids])
  for (const { id, document } of rows) storedById.set(id, document)
}

function firstCreateOfEachId (plants: readonly PlantRow[]): PlantRow[] {
  const firsts = new Map<bigint, PlantRow>()
  for (const plant of plants) if (!firsts.has(plant.id)) firsts.set(plant.id, plant)
  return [...firsts.values()]
}
