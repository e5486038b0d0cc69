import createClient, { type Client } from 'openapi-fetch'
// Through the package's own `imports`, so that the declarations tsc emits name a file the package
// ships rather than a dist/generated/ that tsc never writes: generated/openapi.d.ts here, and
// openapi.d.ts in the client's own package (client/, `npm run pack:client`).
import type { components, paths } from '#openapi-types'
import { stringifyWithBigInts } from '../int64/bigint-json.js'

type Schemas = components['schemas']

export type Plant = Schemas['Plant']
export type NewPlant = Schemas['NewPlant']
export type ApiError = Schemas['Error']

export type PlantStoreClient = Client<paths>

export interface PlantStoreClientOptions {
  // The service's root, BASE_PATH included: `http://127.0.0.1:3000` or `https://host/api/v1`.
  readonly baseUrl: string
  readonly token: string
  readonly fetch?: (request: Request) => Promise<Response>
}

// Typed from the generated paths, where every int64 is `bigint | number`: a bigint keeps every
// digit and is sent as bare JSON digits; a number beyond 2^53 is refused before it is sent.
export function createPlantStoreClient ({ baseUrl, token, fetch = globalThis.fetch }: PlantStoreClientOptions): PlantStoreClient {
  return createClient<paths>({
    baseUrl,
    fetch,
    headers: { authorization: `Bearer ${token}` },
    bodySerializer: stringifyWithBigInts,
  })
}
