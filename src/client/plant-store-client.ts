import createClient, { type Client } from 'openapi-fetch'
// Through the package's own exports, so that the declarations tsc emits to dist/ name a file the
// package ships (generated/openapi.d.ts) rather than a dist/generated/ that tsc never writes.
import type { components, operations, paths } from 'plant-store/openapi-types'

type Schemas = components['schemas']

export type Plant = Schemas['Plant']
export type ApiError = Schemas['Error']
// The spec's int64 id is a number in the generated types, and a number above 2^53 has already
// lost digits; a bigint keeps every one and is sent as bare JSON digits.
export type NewPlant = Omit<Schemas['NewPlant'], 'id'> & { id: bigint | number }

type CreatePlantOperation = Omit<operations['createPlant'], 'requestBody'> & {
  requestBody: { content: { 'application/json': NewPlant } }
}

// The generated paths, with the one int64 request field widened to accept a bigint.
export interface PlantStorePaths extends Omit<paths, '/plants'> {
  '/plants': Omit<paths['/plants'], 'post'> & { post: CreatePlantOperation }
}

export type PlantStoreClient = Client<PlantStorePaths>

export interface PlantStoreClientOptions {
  // The service's root, BASE_PATH included: `http://127.0.0.1:3000` or `https://host/api/v1`.
  readonly baseUrl: string
  readonly token: string
  readonly fetch?: (request: Request) => Promise<Response>
}

export function createPlantStoreClient ({ baseUrl, token, fetch = globalThis.fetch }: PlantStoreClientOptions): PlantStoreClient {
  return createClient<PlantStorePaths>({
    baseUrl,
    fetch,
    headers: { authorization: `Bearer ${token}` },
    bodySerializer: serializeJson,
  })
}

// JSON.stringify cannot write a bigint: each is written as a string holding a marker that no
// other string can contain (it is random and new for every body), and the quoted marker then
// gives way to the bare digits. The replacer reads the holder's own value, before any toJSON
// (a BigInt.prototype.toJSON polyfill would otherwise turn the id into a string). An integer
// number beyond 2^53 is refused, as its digits may not be the ones the caller meant.
function serializeJson (body: unknown): string {
  const marker = `bigint:${Array.from(crypto.getRandomValues(new Uint32Array(4)), (part) => part.toString(36)).join('')}:`
  const json = JSON.stringify(body, function (this: Record<string, unknown>, key: string, value: unknown) {
    const own = this[key]
    if (typeof own === 'bigint') return `${marker}${own}`
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
      throw new RangeError(`${key} is ${value}, beyond 2^53 where a number no longer holds every integer: pass it as a bigint`)
    }
    return value
  })
  return json.replaceAll(new RegExp(`"${marker}(-?\\d+)"`, 'g'), '$1')
}
