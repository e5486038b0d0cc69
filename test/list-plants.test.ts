import t, { type Test } from 'tap'
import { nextPageOf } from 'plant-store/client'
import { parseDocument, type YAMLSeq } from 'yaml'
import { loadOpenApiDocument, type OpenApiDocument, parameterDefault } from '../src/openapi/openapi-document.js'
import { buildTestApp, type TestApp, testToken } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// GET /plants: the plants in ascending order of their int64 id, a page at a time (keyset, by
// `after`), each its stored document with its id, and a `Link` to the next page while more follow.

const asCaller = { authorization: `Bearer ${testToken}` }

interface Page {
  readonly statusCode: number
  readonly plants: Array<Record<string, unknown>>
  readonly text: string
  readonly next: string | undefined
}

async function list (send: TestApp['send'], url: string): Promise<Page> {
  const answer = await send({ method: 'GET', url, headers: asCaller })
  const link = answer.headers.link as string | undefined
  const next = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1]
  return { statusCode: answer.statusCode, plants: answer.body as Array<Record<string, unknown>>, text: answer.response.body, next }
}

// Every page from `url` on, following the Link header.
async function walk (t: Test, send: TestApp['send'], url: string): Promise<Page[]> {
  const pages: Page[] = []
  for (let next: string | undefined = url; next !== undefined;) {
    const page = await list(send, next)
    t.equal(page.statusCode, 200, `${next}: 200`)
    pages.push(page)
    next = page.next
  }
  return pages
}

testOnEveryBackend(t, 'pages in ascending order of id, exact over the whole int64 range, linked to the next', async (t, database) => {
  const { createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url })
  const ids = ['9223372036854775807', '-9223372036854775808', '9007199254740993', '-1', '0', '10', '9007199254740992']
  for (const id of ids) t.equal((await createPlant(`{"id":${id},"name":"plant ${id}","tag":"t"}`)).statusCode, 200)
  await createPlant({ id: 11, name: 'Fern' })

  const pages = await walk(t, send, '/plants?limit=3')
  t.same(pages.map(({ plants }) => plants.length), [3, 3, 2], 'three pages of at most 3')
  t.equal(pages.at(-1)?.next, undefined, 'the last page links to nothing')
  t.equal(pages[0]?.next, '/plants?after=0&limit=3', 'the next page starts after the last id of this one')
  const text = pages.map((page) => page.text).join('')
  t.equal(text,
    '[{"id":-9223372036854775808,"name":"plant -9223372036854775808","tag":"t"},{"id":-1,"name":"plant -1","tag":"t"},{"id":0,"name":"plant 0","tag":"t"}]' +
    '[{"id":10,"name":"plant 10","tag":"t"},{"id":11,"name":"Fern"},{"id":9007199254740992,"name":"plant 9007199254740992","tag":"t"}]' +
    '[{"id":9007199254740993,"name":"plant 9007199254740993","tag":"t"},{"id":9223372036854775807,"name":"plant 9223372036854775807","tag":"t"}]',
    'signed order, every digit of every id, and each plant as it is stored')
})

testOnEveryBackend(t, 'the first page, its default limit, an empty store and a cursor past the end', async (t, database) => {
  const { createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url })
  const empty = await list(send, '/plants')
  t.same([empty.statusCode, empty.text, empty.next], [200, '[]', undefined], 'an empty store: an empty array and no link')
  for (let id = 1; id <= 101; id++) await createPlant({ id, name: `plant ${id}` })
  const first = await list(send, '/plants')
  t.equal(first.plants.length, 100, 'a page holds 100 plants by default, as the spec declares')
  t.equal(first.next, '/plants?after=100&limit=100')
  const exactlyAll = await list(send, '/plants?limit=101')
  t.same([exactlyAll.plants.length, exactlyAll.next], [101, undefined], 'no link when the page holds the last plant')
  const past = await list(send, '/plants?after=101')
  t.same([past.text, past.next], ['[]', undefined])
  const between = await list(send, '/plants?after=-5&limit=2')
  t.same(between.plants.map(({ id }) => id), [1, 2], 'a cursor need not be a stored id')
})

t.test('limit and after are read exactly, within their bounds', async (t) => {
  const { send } = await buildTestApp(t)
  const cases: Array<[string, number, string]> = [
    ['limit=0', 40003, 'querystring.limit must be >= 1'],
    ['limit=1001', 40003, 'querystring.limit must be <= 1000'],
    ['limit=abc', 40003, 'querystring.limit must be integer'],
    ['limit=1.5', 40003, 'querystring.limit must be integer'],
    ['limit=007', 40003, 'querystring.limit must be integer'],
    ['after=abc', 40003, 'querystring.after must be integer'],
    ['after=9223372036854775808', 40004, 'querystring.after must be an integer from -9223372036854775808 to 9223372036854775807'],
    ['after=1e400', 40004, 'querystring.after must be an integer from -9223372036854775808 to 9223372036854775807'],
  ]
  for (const [query, code, message] of cases) {
    const answer = await send({ method: 'GET', url: `/plants?${query}`, headers: asCaller })
    t.same([answer.statusCode, answer.body], [400, { error: code, message }], query)
  }
  t.equal((await send({ method: 'GET', url: '/plants?limit=1000&after=1e3', headers: asCaller })).statusCode, 200, 'the bounds themselves, and 1e3')
})

t.test('under a BASE_PATH, the next page is linked under it', async (t) => {
  const { createPlant, send } = await buildTestApp(t, { BASE_PATH: '/api/v1' })
  await createPlant({ id: 1, name: 'Fern' })
  await createPlant({ id: 2, name: 'Aloe' })
  const first = await list(send, '/api/v1/plants?limit=1')
  t.equal(first.next, '/api/v1/plants?after=1&limit=1')
  const second = await list(send, first.next ?? '')
  t.same(second.plants, [{ id: 2, name: 'Aloe' }])
})

testOnEveryBackend(t, 'walking every page while others create and delete: each plant that existed throughout, once, in order', async (t, database) => {
  const { createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url })
  const lasting = new Set<number>()
  for (let id = 0; id < 400; id += 2) {
    await createPlant({ id, name: `lasting ${id}` })
    lasting.add(id)
  }
  for (let id = 1; id < 400; id += 2) await createPlant({ id, name: `doomed ${id}` })

  // While the walk runs: the odd plants are deleted and new ones come and go among them.
  const walking = { done: false }
  const churn = (async () => {
    for (let round = 0; !walking.done; round++) {
      const id = 1 + 2 * (round % 200)
      await send({ method: 'DELETE', url: `/plants/${id}`, headers: asCaller })
      await createPlant({ id: 1000 + round, name: `new ${round}` })
      await send({ method: 'DELETE', url: `/plants/${1000 + round}`, headers: asCaller })
    }
  })()
  const pages = await walk(t, send, '/plants?limit=7')
  walking.done = true
  await churn

  const seen = pages.flatMap(({ plants }) => plants)
  const ids = seen.map(({ id }) => Number(id))
  t.same(ids, [...ids].sort((a, b) => a - b), 'in ascending order')
  t.equal(new Set(ids).size, ids.length, 'none twice')
  t.same([...lasting].filter((id) => !ids.includes(id)), [], 'every plant that existed throughout is there')
  const names = new Map(seen.map(({ id, name }) => [Number(id), name]))
  t.ok(ids.every((id) => (id % 2 === 0 && id < 400 && names.get(id) === `lasting ${id}`) ||
    (id % 2 === 1 && id < 400 && names.get(id) === `doomed ${id}`) || (id >= 1000 && names.get(id) === `new ${id - 1000}`)),
  'and nothing that never existed')
})

t.test('listing plants takes a token that holds plants:read', async (t) => {
  const { send } = await buildTestApp(t)
  const anonymous = await send({ method: 'GET', url: '/plants' })
  t.same([anonymous.statusCode, (anonymous.body as { error: number }).error], [401, 40101])
})

t.test('the next page\'s Link carries every query parameter but the cursor, with no code of its own; nextPageOf hands them back', async (t) => {
  // A filter the spec gains, which no code here names: the Link carries it as the client sent it.
  const spec = parseDocument(loadOpenApiDocument().yamlText)
  const parameters = spec.getIn(['paths', '/plants', 'get', 'parameters']) as YAMLSeq
  parameters.add(spec.createNode({ name: 'tag', in: 'query', required: false, schema: { type: 'string', maxLength: 32 } }))
  const { createPlant, send } = await buildTestApp(t, {}, { openApi: { document: spec.toJS() as OpenApiDocument, yamlText: spec.toString() } })
  for (let id = 1; id <= 3; id++) await createPlant({ id, name: `plant ${id}` })
  const first = await list(send, '/plants?tag=aroid&limit=1')
  t.equal(first.next, '/plants?after=1&limit=1&tag=aroid', 'the cursor, then the declared parameters in the order the spec lists them')
  const defaulted = await list(send, '/plants?tag=a%20b')
  t.equal(defaulted.next, undefined, 'a page that holds every plant links to nothing')
  const withDefault = await list(send, '/plants?tag=a%20b&limit=2')
  t.equal(withDefault.next, '/plants?after=2&limit=2&tag=a+b', 'a value written as the client sent it, encoded')
  const response = new Response(null, { headers: { link: `<${first.next ?? ''}>; rel="next"` } })
  t.same(nextPageOf(response), { after: 1, limit: 1, tag: 'aroid' }, 'nextPageOf gives back every parameter of the link')
  const large = new Response(null, { headers: { link: '</plants?after=9007199254740993&limit=100>; rel="next"' } })
  t.same(nextPageOf(large), { after: 9007199254740993n, limit: 100 }, 'an id beyond 2^53 as a bigint, every digit kept')
})

t.test('the Link writes a parameter at its default when the client left it out', async (t) => {
  const { createPlant, send } = await buildTestApp(t)
  for (let id = 1; id <= 101; id++) await createPlant({ id, name: `plant ${id}` })
  const page = await list(send, '/plants')
  t.equal(page.next, `/plants?after=100&limit=${String(parameterDefault(loadOpenApiDocument().document, 'listPlants', 'limit'))}`)
})
