import t, { type Test } from 'tap'
import { type ApiError, createPlantStoreClient, type ListPlantsQuery, nextPageOf, type Plant, type PlantStoreClient, type StoredPlant } from 'plant-store/client'
import { issueManagedToken } from '../src/auth/managed-token.js'
import { assertExchangeMatchesSpec } from './support/contract.js'
import { buildTestApp, testToken } from './support/helper.js'

// The client a consumer imports (`plant-store/client`, the built package through its own
// exports) against a live server, every answer also checked against openapi.yaml.

// Holds only when A and B are the same type: `any` or a wider type fails to compile.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function assertType<A, B> (proof: Equal<A, B>): void { void proof }

async function startClient (t: Test, token = testToken): Promise<PlantStoreClient> {
  return (await startClientAndApp(t, token)).client
}

async function startClientAndApp (t: Test, token = testToken): Promise<{ client: PlantStoreClient, app: Awaited<ReturnType<typeof buildTestApp>>['app'] }> {
  const { app } = await buildTestApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address')
  const client = createPlantStoreClient({
    baseUrl: `http://127.0.0.1:${address.port}`,
    token,
    fetch: async (request) => {
      const response = await fetch(request)
      assertExchangeMatchesSpec(t, {
        method: request.method,
        url: request.url,
        statusCode: response.status,
        contentType: response.headers.get('content-type') ?? undefined,
        bodyText: await response.clone().text(),
      })
      return response
    },
  })
  return { client, app }
}

t.test('a created plant comes back as data typed Plant', async (t) => {
  const client = await startClient(t)
  const { data, error, response } = await client.POST('/plants', { body: { id: 1, name: 'Monstera', tag: 'aroid' } })
  assertType<typeof data, Plant | undefined>(true)
  assertType<typeof error, ApiError | undefined>(true)
  t.equal(response.status, 200)
  t.same(data, { name: 'Monstera', tag: 'aroid' })
  t.equal(error, undefined)
})

t.test('an invalid body is a 400 whose error is typed ApiError', async (t) => {
  const client = await startClient(t)
  // @ts-expect-error a NewPlant needs a name
  const { data, error, response } = await client.POST('/plants', { body: { id: 2 } })
  t.equal(response.status, 400)
  t.equal(data, undefined)
  t.same(error, { error: 40003, message: 'body.name is required' })
})

t.test('an unknown token is a 401 with code 40102', async (t) => {
  const client = await startClient(t, 'not-a-known-token')
  const { error, response } = await client.POST('/plants', { body: { id: 3, name: 'Fern' } })
  t.equal(response.status, 401)
  t.match(response.headers.get('www-authenticate'), /error="invalid_token"/)
  t.equal(error?.error, 40102)
})

t.test('another name for a taken id is a 409 with code 40901', async (t) => {
  const client = await startClient(t)
  t.equal((await client.POST('/plants', { body: { id: 4, name: 'Aloe' } })).response.status, 200)
  const { error, response } = await client.POST('/plants', { body: { id: 4, name: 'Agave' } })
  t.equal(response.status, 409)
  t.same(error, { error: 40901, message: 'a plant with id 4 already exists with a different name or tag' })
})

t.test('a bigint id beyond 2^53 is sent with every digit', async (t) => {
  const client = await startClient(t)
  const id = 9_007_199_254_740_993n
  const plant = { id, name: 'Exact' }
  t.equal((await client.POST('/plants', { body: plant })).response.status, 200)
  t.equal((await client.POST('/plants', { body: plant })).response.status, 200, 'a replay of the same id')
  const conflict = await client.POST('/plants', { body: { id, name: 'Other' } })
  t.equal(conflict.response.status, 409)
  t.equal(conflict.error?.message, 'a plant with id 9007199254740993 already exists with a different name or tag')
  const neighbour = await client.POST('/plants', { body: { id: id - 1n, name: 'Other' } })
  t.equal(neighbour.response.status, 200, '9007199254740992 is still free')
})

t.test('pages of plants, followed by their Link, with every id exact; a delete; a 403', async (t) => {
  const { client, app } = await startClientAndApp(t)
  const ids = [9_007_199_254_740_993n, -(2n ** 63n), 5n, 2n ** 63n - 1n]
  for (const id of ids) t.equal((await client.POST('/plants', { body: { id, name: `plant ${id}` } })).response.status, 200)
  const seen: StoredPlant[] = []
  let pages = 0
  for (let query: ListPlantsQuery | undefined = { limit: 3 }; query !== undefined; pages++) {
    const { data, response } = await client.GET('/plants', { params: { query } })
    const typed: StoredPlant[] | undefined = data
    seen.push(...(typed ?? []))
    query = nextPageOf(response)
  }
  t.equal(pages, 2, 'two pages of at most three')
  t.same(seen.map(({ id }) => id), [-(2n ** 63n), 5, 9_007_199_254_740_993n, 2n ** 63n - 1n],
    'in order, a safe id as a number and every other as a bigint of every digit')

  const deleted = await client.DELETE('/plants/{id}', { params: { path: { id: 5 } } })
  t.same([deleted.response.status, deleted.data, deleted.error], [204, undefined, undefined])
  const again = await client.DELETE('/plants/{id}', { params: { path: { id: 5 } } })
  t.same([again.response.status, again.error], [404, { error: 40401, message: 'no plant has id 5' }])

  const { token } = await issueManagedToken(app.apiTokens, { name: 'reader', roles: ['plants:read'] })
  const reader = createPlantStoreClient({ baseUrl: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, token })
  const forbidden = await reader.DELETE('/plants/{id}', { params: { path: { id: 9_007_199_254_740_993n } } })
  t.same([forbidden.response.status, forbidden.error], [403, { error: 40301, message: 'the token lacks a role this operation needs: plants:write' }])
})

t.test('the int64 range ends exactly where the spec says', async (t) => {
  const client = await startClient(t)
  const largest = 2n ** 63n - 1n
  t.equal((await client.POST('/plants', { body: { id: largest, name: 'Last' } })).response.status, 200)
  t.equal((await client.POST('/plants', { body: { id: -largest - 1n, name: 'First' } })).response.status, 200)
  const { error } = await client.POST('/plants', { body: { id: largest + 1n, name: 'Beyond' } })
  t.equal(error?.error, 40004)
})

t.test('the request carries the token and bare JSON digits; a number beyond 2^53 is never sent', async (t) => {
  const sent: Request[] = []
  const client = createPlantStoreClient({
    baseUrl: 'http://plant-store.invalid/api/v1/',
    token: 'a-token',
    fetch: async (request) => {
      sent.push(request)
      return Response.json({ name: 'Exact' })
    },
  })
  await client.POST('/plants', { body: { id: -9_007_199_254_740_993n, name: 'Exact', tag: '"bigint"' } })
  const [request] = sent
  t.equal(request?.url, 'http://plant-store.invalid/api/v1/plants')
  t.equal(request?.headers.get('authorization'), 'Bearer a-token')
  t.equal(request?.headers.get('content-type'), 'application/json')
  t.equal(await request?.text(), '{"id":-9007199254740993,"name":"Exact","tag":"\\"bigint\\""}')

  // A common polyfill: without care it would run before the serializer sees the bigint.
  const withToJson = BigInt.prototype as unknown as { toJSON?: () => string }
  withToJson.toJSON = function (this: bigint) { return this.toString() }
  try {
    await client.POST('/plants', { body: { id: 12n, name: 'Polyfilled' } })
  } finally {
    delete withToJson.toJSON
  }
  t.equal(await sent[1]?.text(), '{"id":12,"name":"Polyfilled"}', 'a BigInt toJSON polyfill changes nothing')

  await t.rejects(client.POST('/plants', { body: { id: Number.MAX_SAFE_INTEGER + 1, name: 'Rounded' } }),
    new RangeError('id is 9007199254740992, beyond 2^53 where a number no longer holds every integer: pass it as a bigint'))
  t.equal(sent.length, 2)
})

t.test('an update through the client, guarded by the ETag it read: a stale one is the 412 the spec declares', async (t) => {
  const client = await startClient(t)
  const created = await client.POST('/plants', { body: { id: 9_007_199_254_740_993n, name: 'Monstera', tag: 'aroid' } })
  const tag = created.response.headers.get('etag') ?? ''
  t.match(tag, /^"[\w-]{24}"$/, 'the create answered the plant\'s ETag')
  const path = { id: 9_007_199_254_740_993n }
  const updated = await client.PUT('/plants/{id}', { params: { path, header: { 'If-Match': tag } }, body: { name: 'Monstera', tag: 'climber' } })
  const plant: Plant | undefined = updated.data
  t.same([updated.response.status, plant], [200, { name: 'Monstera', tag: 'climber' }])
  const stale = await client.PUT('/plants/{id}', { params: { path, header: { 'If-Match': tag } }, body: { name: 'Monstera' } })
  const refusal: ApiError | undefined = stale.error
  t.same([stale.response.status, refusal?.error], [412, 41201], 'the tag read before the update no longer matches')
  const read = await client.GET('/plants/{id}', { params: { path } })
  t.same([read.data, read.response.headers.get('etag')], [{ name: 'Monstera', tag: 'climber' }, updated.response.headers.get('etag')])
})
