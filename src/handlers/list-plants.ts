import type { components, operations } from '../../generated/openapi.js'
import { type OpenApiDocument, parameterDefault } from '../openapi/openapi-document.js'
import { type PlantStore, plantWithId } from '../store/plant-store.js'
import { type OperationHandler, sendJsonText } from './typed-handler.js'

type StoredPlant = components['schemas']['StoredPlant']

// A page of plants, each its stored document with its id (exact: the digits are written as
// they are), and the next page's link when more follow, under the route's own base path. The
// validator adds no default to a request, so `limit`'s is read from the spec.
export function listPlantsHandler (store: PlantStore, document: OpenApiDocument): OperationHandler<operations['listPlants']> {
  const defaultLimit = parameterDefault(document, 'listPlants', 'limit')
  if (typeof defaultLimit !== 'number') throw new Error('openapi.yaml declares no default for listPlants\' limit')
  return async function listPlants (request, reply) {
    const { after, limit = defaultLimit } = request.query
    const { plants, more } = await store.listPlants(after, limit)
    const last = plants.at(-1)
    if (more && last !== undefined) {
      reply.header('link', `<${request.routeOptions.url ?? '/plants'}?after=${last.id}&limit=${limit}>; rel="next"`)
    }
    return sendJsonText<StoredPlant[]>(reply, `[${plants.map(plantWithId).join(',')}]`)
  }
}
