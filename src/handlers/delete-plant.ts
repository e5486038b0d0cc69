import type { operations } from '../../generated/openapi.js'
import { NotFoundError } from '../errors/api-errors.js'
import type { PlantStore } from '../store/plant-store.js'
import { noContent, type OperationHandler } from './typed-handler.js'

// Answered once the deletion is as durable as a create: the store's batch has committed it.
// A delete that removes a plant sends its webhooks, linked to this request's trace.
export function deletePlantHandler (store: PlantStore, traceparent: () => string | undefined): OperationHandler<operations['deletePlant']> {
  return async function deletePlant ({ params: { id } }, reply) {
    if (!await store.deletePlant(id, { traceparent: traceparent() })) return new NotFoundError(`no plant has id ${id}`)
    return noContent(reply)
  }
}
