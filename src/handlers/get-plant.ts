import type { components, operations } from '../../generated/openapi.js'
import { NotFoundError } from '../errors/api-errors.js'
import { validatedInt64 } from '../int64/read-int64.js'
import type { PlantStore } from '../store/plant-store.js'
import { type OperationHandler, sendJsonText } from './operation-handler.js'

type Plant = components['schemas']['Plant']

// The stored document is the Plant, as createPlant stored and answered it.
export function getPlantHandler (store: PlantStore): OperationHandler<operations['getPlant']> {
  return async function getPlant (request, reply) {
    const id = validatedInt64(request.params, 'id')
    const plant = await store.getPlant(id)
    if (plant === undefined) throw new NotFoundError(`no plant has id ${id}`)
    return sendJsonText<Plant>(reply, plant.document)
  }
}
