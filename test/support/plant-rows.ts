import { canonicalJson } from '../../src/int64/canonical-json.js'
import { unreachable } from '../../src/errors/unreachable.js'
import type { PlantRow, PlantStore, WriteContext } from '../../src/store/plant-store.js'

export interface PlantFields {
  readonly id: bigint
  readonly name: string
  readonly tag?: string
}

// Store tests speak of plants by their fields; a store keeps each as its id and document.
export function plantRow ({ id, ...fields }: PlantFields): PlantRow {
  return { id, document: canonicalJson(fields) }
}

// A stored document, as SQL writes one: for inserting rows from outside the store.
export function documentOf (fields: Omit<PlantFields, 'id'>): string {
  return canonicalJson(fields)
}

// The id is taken by a plant with another document: what createInStore below rejects with.
export class PlantConflictError extends Error {
  constructor (readonly id: bigint) {
    super(`a plant with id ${id} already exists with a different name or tag`)
    this.name = 'PlantConflictError'
  }
}

// A create through the store's one write call (createInStore), as store tests speak of it: the plant, and whether
// it was new (false for a safe retry); a conflict rejects.
export async function createInStore (store: PlantStore, plant: PlantRow, context?: WriteContext): Promise<{ plant: PlantRow, created: boolean }> {
  const result = await store.write({ kind: 'create', id: plant.id, document: plant.document, context })
  switch (result) {
    case 'created': return { plant, created: true }
    case 'replayed': return { plant, created: false }
    case 'conflict': throw new PlantConflictError(plant.id)
    default: return unreachable(result)
  }
}

// A delete through the store's one write call: whether there was a plant to delete.
export async function deleteFromStore (store: PlantStore, id: bigint, context?: WriteContext): Promise<boolean> {
  return await store.write({ kind: 'delete', id, context }) === 'deleted'
}
