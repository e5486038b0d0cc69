import type { components, operations } from '../../generated/openapi.js'
import { NotFoundError } from '../errors/api-errors.js'
import type { PlantStore } from '../store/plant-store.js'
import { type OperationHandler, sendJsonText } from './typed-handler.js'

type Plant = components['schemas']['Plant']

// The stored document is the Plant, as createPlant stored and answered it.
export function getPlantHandler (store: PlantStore): OperationHandler<operations['getPlant']> {
  return async function getPlant ({ params: { id } }, reply) {
    const plant = await store.getPlant(id)
    if (plant === undefined) return new NotFoundError(`no plant has id ${id}`)
    return sendJsonText<Plant>(reply, plant.document)
  }
}
