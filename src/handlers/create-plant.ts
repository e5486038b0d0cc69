import type { components, operations } from '../../generated/openapi.js'
import { IdOutOfRangeError, SchemaViolationError } from '../errors/api-errors.js'
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
  if (id === 'out-of-range') throw new IdOutOfRangeError('body.id')
  if (id === 'not-an-integer') throw new SchemaViolationError('body.id must be integer')
  return body.tag === undefined ? { id, name: body.name } : { id, name: body.name, tag: body.tag }
}

function toPlantBody (plant: PlantRecord): Plant {
  return plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag }
}
