import type { components, operations } from '../../generated/openapi.js'
import { readInt64 } from '../json/json-integer.js'
import type { PlantRecord, PlantStore } from '../store/plant-store.js'
import type { OperationHandler } from './operation-handler.js'

type NewPlant = components['schemas']['NewPlant']
type Plant = components['schemas']['Plant']

export function createPlantHandler (store: PlantStore): OperationHandler<operations['createPlant']> {
  return async function createPlant (request) {
    const { plant } = await store.createPlant(toPlantRecord(request.body))
    return toPlantBody(plant)
  }
}

// Only the declared fields are kept: undeclared properties are allowed by the spec, but never
// stored or echoed.
function toPlantRecord (body: NewPlant): PlantRecord {
  const id = readInt64(body, 'id')
  // Validation against the spec has already refused any id that is not an exact int64.
  if (typeof id !== 'bigint') throw new Error(`body.id passed validation but reads as ${id}`)
  return body.tag === undefined ? { id, name: body.name } : { id, name: body.name, tag: body.tag }
}

function toPlantBody (plant: PlantRecord): Plant {
  return plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag }
}
