import { canonicalJson } from '../../src/int64/canonical-json.js'
import type { PlantRow } from '../../src/store/plant-store.js'

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
