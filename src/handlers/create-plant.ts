import type { components, operations } from '../../generated/openapi.js'
import { ConflictResponseError } from '../errors/api-errors.js'
import { compileDocumentWriter } from '../openapi/declared-document.js'
import type { LoadedOpenApiDocument } from '../openapi/openapi-document.js'
import type { PlantStore } from '../store/plant-store.js'
import { PlantConflictError } from '../store/store-errors.js'
import { type OperationHandler, sendJsonText } from './typed-handler.js'

type Plant = components['schemas']['Plant']

// The shape of the plants already stored, as the last migration of their documents left them
// (src/store/migrations.ts). A spec change that stored plants would no longer meet (a new
// required property, a changed type, a removed property) fails to compile here: write the
// migration that brings the stored documents to the new Plant, then record the new shape.
// An optional property added to Plant needs neither.
interface StoredPlantShape {
  name: string
  tag?: string
}
type IsStillAPlant<Stored> = [Stored] extends [Plant]
  ? [Exclude<keyof Stored, keyof Plant>] extends [never] ? true : false
  : false
type MustHold<Check extends true> = Check
export type StoredPlantsAreStillPlants = MustHold<IsStillAPlant<StoredPlantShape>>

// A plant is stored as the document of the properties Plant declares, and that document is the
// 200 body: undeclared properties of the request are never stored or echoed, and a property
// added to Plant in openapi.yaml is stored, echoed and compared with no change here. Another
// plant under the id is the 409 the operation declares. A create that stores a new plant sends
// its webhooks, linked to this request's trace.
export function createPlantHandler (
  store: PlantStore, { document }: LoadedOpenApiDocument, traceparent: () => string | undefined
): OperationHandler<operations['createPlant']> {
  const writePlantDocument = compileDocumentWriter(document, '#/components/schemas/Plant')
  return async function createPlant ({ body }, reply) {
    try {
      const { plant } = await store.createPlant({ id: body.id, document: writePlantDocument(body) }, { traceparent: traceparent() })
      return sendJsonText<Plant>(reply, plant.document)
    } catch (error) {
      if (error instanceof PlantConflictError) return new ConflictResponseError(error.message)
      throw error
    }
  }
}
