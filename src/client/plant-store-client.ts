import createClient, { type Client } from 'openapi-fetch'
// Through the package's own `imports`, so that the declarations tsc emits name a file the package
// ships rather than a dist/generated/ that tsc never writes: generated/openapi.d.ts here, and
// openapi.d.ts in the client's own package (client/, `npm run pack:client`).
import type { components, operations, paths, webhooks } from '#openapi-types'
import { parseWithBigInts, stringifyWithBigInts } from '../int64/bigint-json.js'

type Schemas = components['schemas']

export type Plant = Schemas['Plant']
export type NewPlant = Schemas['NewPlant']
export type StoredPlant = Schemas['StoredPlant']
export type ApiError = Schemas['Error']
export type WebhookEndpoint = Schemas['WebhookEndpoint']
export type NewWebhookEndpoint = Schemas['NewWebhookEndpoint']
export type CreatedWebhookEndpoint = Schemas['CreatedWebhookEndpoint']

// The body of each webhook openapi.yaml declares, by name, as a receiver gets it (verify it first:
// docs/webhooks.md): `WebhookPayloads['newPlant']` is a NewPlantEvent.
export type WebhookPayloads = {
  [Name in keyof webhooks]: webhooks[Name] extends { post: { requestBody: { content: { 'application/json': infer Body } } } } ? Body : never
}
export type WebhookPayload = WebhookPayloads[keyof WebhookPayloads]
export type NewPlantEvent = Schemas['NewPlantEvent']
export type PlantDeletedEvent = Schemas['PlantDeletedEvent']

export type PlantStoreClient = Client<paths>

export interface PlantStoreClientOptions {
  // The service's root, BASE_PATH included: `http://127.0.0.1:3000` or `https://host/api/v1`.
  readonly baseUrl: string
  readonly token: string
  readonly fetch?: (request: Request) => Promise<Response>
}

// Typed from the generated paths, where every int64 is `bigint | number`: a bigint keeps every
// digit and is sent as bare JSON digits; a number beyond 2^53 is refused before it is sent; and
// an answer's integer beyond 2^53 (a listed plant's id) is read as a bigint, every digit kept.
export function createPlantStoreClient ({ baseUrl, token, fetch = globalThis.fetch }: PlantStoreClientOptions): PlantStoreClient {
  return createClient<paths>({
    baseUrl,
    fetch: async (request) => withExactJson(await fetch(request)),
    headers: { authorization: `Bearer ${token}` },
    bodySerializer: stringifyWithBigInts,
  })
}

export type ListPlantsQuery = NonNullable<operations['listPlants']['parameters']['query']>

// The next page of a listPlants answer, from its Link header (`rel="next"`): what to ask for
// next (`client.GET('/plants', { params: { query: nextPageOf(response) } })`), every query
// parameter the link carries (the cursor, the limit, any filter), or undefined on the last page.
// An integer is given as a number, or as a bigint beyond 2^53 (an `after` id keeps every digit).
export function nextPageOf (response: Response): ListPlantsQuery | undefined {
  const link = /^<([^>]*)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1]
  if (link === undefined) return undefined
  const query: Record<string, string | number | bigint | Array<string | number | bigint>> = {}
  for (const [name, text] of new URL(link, 'http://plant-store.invalid').searchParams) {
    const value = /^-?\d+$/.test(text) ? exactInteger(text) : text
    const earlier = query[name]
    query[name] = earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value]
  }
  return query as ListPlantsQuery
}

function exactInteger (digits: string): number | bigint {
  const value = BigInt(digits)
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value
}

// openapi-fetch reads a JSON body with response.json(), or JSON.parse when it has no
// Content-Length: the answer is given both, so that either reads it exactly.
async function withExactJson (response: Response): Promise<Response> {
  if (!/^application\/json\b/.test(response.headers.get('content-type') ?? '') || response.body === null) return response
  const text = await response.text()
  const headers = new Headers(response.headers)
  headers.set('content-length', String(new TextEncoder().encode(text).length))
  const exact = new Response(text, { status: response.status, statusText: response.statusText, headers })
  return Object.assign(exact, { json: async () => parseWithBigInts(text) })
}
