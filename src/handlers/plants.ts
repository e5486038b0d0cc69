import type { components, operations } from '../../generated/openapi.js'
import type { FastifyReply } from 'fastify'
import { ConflictResponseError, NotFoundError, PreconditionFailedError } from '../errors/api-errors.js'
import { unreachable } from '../errors/unreachable.js'
import { entityTagOf, ifMatchCondition, namesEntityTags } from '../http/entity-tags.js'
import { compileDocumentWriter } from '../openapi/declared-document.js'
import { type LoadedOpenApiDocument, type OpenApiDocument, parameterDefault, parametersOf } from '../openapi/openapi-document.js'
import { type PlantStore, plantWithId } from '../store/plant-store.js'
import { type JsonText, noContent, type OperationHandler, sendJsonText } from './typed-handler.js'

// The plants' operations: each speaks to the store in plants (a PlantRow: an id and the stored
// document) and answers the document as it is stored, with its entity tag (src/http/entity-tags.ts).
// A write hands its write to the store before its first await (src/http/request-turns.ts), and
// answers what the store says it came to, in a switch the compiler holds to every result.

type Plant = components['schemas']['Plant']
type StoredPlant = components['schemas']['StoredPlant']

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
    const plantDocument = writePlantDocument(body)
    const result = await store.write({ kind: 'create', id: body.id, document: plantDocument, context: { traceparent: traceparent() } })
    switch (result) {
      case 'created':
      case 'replayed': return sendPlant(reply, plantDocument)
      case 'conflict': return new ConflictResponseError(`a plant with id ${body.id} already exists with a different name or tag`)
      default: return unreachable(result)
    }
  }
}

// The stored document is the Plant, as createPlant stored and answered it.
export function getPlantHandler (store: PlantStore): OperationHandler<operations['getPlant']> {
  return async function getPlant ({ params: { id } }, reply) {
    const plant = await store.getPlant(id)
    if (plant === undefined) return new NotFoundError(`no plant has id ${id}`)
    return sendPlant(reply, plant.document)
  }
}

// A page of plants, each its stored document with its id (exact: the digits are written as
// they are), and the next page's link when more follow, under the route's own base path: the
// same query, every parameter the spec declares as the client sent it (or at its default), but
// the cursor, which starts after this page's last id. The validator adds no default to a
// request, so `limit`'s is read from the spec.
export function listPlantsHandler (store: PlantStore, document: OpenApiDocument): OperationHandler<operations['listPlants']> {
  const defaultLimit = parameterDefault(document, 'listPlants', 'limit')
  if (typeof defaultLimit !== 'number') throw new Error('openapi.yaml declares no default for listPlants\' limit')
  const queryParameters = parametersOf(document, 'listPlants').filter((parameter) => parameter.in === 'query' && parameter.name !== cursor)
  return async function listPlants (request, reply) {
    const { after, limit = defaultLimit } = request.query
    const { plants, more } = await store.listPlants(after, limit)
    const last = plants.at(-1)
    if (more && last !== undefined) {
      const sent = new URLSearchParams(request.raw.url?.split('?')[1] ?? '')
      const next = new URLSearchParams({ [cursor]: String(last.id) })
      for (const { name, default: fallback } of queryParameters) {
        const values = sent.getAll(name)
        if (values.length === 0 && fallback !== undefined) next.append(name, String(fallback))
        for (const value of values) next.append(name, value)
      }
      reply.header('link', `<${request.routeOptions.url ?? '/plants'}?${next.toString()}>; rel="next"`)
    }
    return sendJsonText<StoredPlant[]>(reply, `[${plants.map(plantWithId).join(',')}]`)
  }
}

// The query parameter a page starts after.
const cursor = 'after'

// The body replaces the stored plant, as createPlant writes a plant (only what Plant declares),
// answered once the change is as durable as a create. The same plant again changes nothing and
// sends nothing. With If-Match, only while the plant is still the one tagged so. An update that
// changes the plant sends its webhooks, linked to this request's trace.
export function updatePlantHandler (
  store: PlantStore, { document }: LoadedOpenApiDocument, traceparent: () => string | undefined
): OperationHandler<operations['updatePlant']> {
  const writePlantDocument = compileDocumentWriter(document, '#/components/schemas/Plant')
  return async function updatePlant ({ params: { id }, body, headers }, reply) {
    const plantDocument = writePlantDocument(body)
    const condition = ifMatchCondition(headers['if-match'])
    const result = await store.write({ kind: 'update', id, document: plantDocument, condition, context: { traceparent: traceparent() } })
    switch (result) {
      case 'updated':
      case 'unchanged': return sendPlant(reply, plantDocument)
      case 'absent': return new NotFoundError(`no plant has id ${id}`)
      case 'condition-failed': return new PreconditionFailedError(id, namesEntityTags(headers['if-match']))
      default: return unreachable(result)
    }
  }
}

// Answered once the deletion is as durable as a create: the store's batch has committed it.
// With If-Match, only while the plant is still the one tagged so. A delete that removes a plant
// sends its webhooks, linked to this request's trace.
export function deletePlantHandler (store: PlantStore, traceparent: () => string | undefined): OperationHandler<operations['deletePlant']> {
  return async function deletePlant ({ params: { id }, headers }, reply) {
    const condition = ifMatchCondition(headers['if-match'])
    const result = await store.write({ kind: 'delete', id, condition, context: { traceparent: traceparent() } })
    switch (result) {
      case 'deleted': return noContent(reply)
      case 'absent': return new NotFoundError(`no plant has id ${id}`)
      case 'condition-failed': return new PreconditionFailedError(id, namesEntityTags(headers['if-match']))
      default: return unreachable(result)
    }
  }
}

// A plant's document as the 200 body, with its entity tag.
function sendPlant (reply: FastifyReply, document: string): JsonText<Plant> {
  reply.header('etag', entityTagOf(document))
  return sendJsonText<Plant>(reply, document)
}
