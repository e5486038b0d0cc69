import type { CreatePlantOutcome, PlantRecord } from './plant-store.js'
import { PlantConflictError } from './store-errors.js'

// What one create came to inside a committed batch: stored, found already stored with the same
// name and tag (a safe retry), or refused because the id holds another plant.
export type CreateResult = 'created' | 'replayed' | 'conflict'

export function toCreatePlantOutcome (plant: PlantRecord, result: CreateResult): CreatePlantOutcome {
  if (result === 'conflict') throw new PlantConflictError(plant.id)
  return { plant, created: result === 'created' }
}

export function isSamePlant (plant: PlantRecord, stored: { name: string, tag: string | null }): boolean {
  return stored.name === plant.name && stored.tag === (plant.tag ?? null)
}
