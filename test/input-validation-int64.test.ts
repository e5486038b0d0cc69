import t from 'tap'
import { loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { readStoredPlants } from './support/stored-plants.js'
import { buildTestApp } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// How POST /plants reads int64 ids: exactly, on every backend, with no loss above 2^53, only
// integers (however they are written), and a 40004 outside the int64 range. Rejected requests
// never store or change anything.

const int64RangeMessage = 'body.id must be an integer from -9223372036854775808 to 9223372036854775807'

t.test('a fraction is not an id even when its double is an integer', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  for (const id of ['9007199254740993.5', '12345678901234567890.5', '1e-400', '-1e-400']) {
    const response = await createPlant(`{"id":${id},"name":"Fraction"}`)
    t.equal(response.statusCode, 400, id)
    t.same(response.body, { error: 40003, message: 'body.id must be integer' }, id)
  }
  t.same(readStoredPlants(databaseFile), [], 'nothing stored')
})

testOnEveryBackend(t, 'an id written as 1.0, 1e3 or -0 is an integer and is stored as one', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  for (const [text, name] of [['1.0', 'One'], ['1e3', 'Thousand'], ['-0', 'Zero']] as const) {
    const created = await createPlant(`{"id":${text},"name":"${name}"}`)
    t.equal(created.statusCode, 200, text)
    t.same(created.body, { name })
  }
  t.same(await database.readStoredPlants(), [
    { id: 0n, name: 'Zero', tag: null },
    { id: 1n, name: 'One', tag: null },
    { id: 1000n, name: 'Thousand', tag: null },
  ])
  t.equal((await createPlant('{"id":1,"name":"One"}')).statusCode, 200, '1 is the plant that 1.0 created')
  t.equal((await createPlant('{"id":1000,"name":"Other"}')).statusCode, 409, '1000 is the plant that 1e3 created')
  t.equal((await createPlant('{"id":0,"name":"Other"}')).statusCode, 409, '0 is the plant that -0 created')
})

testOnEveryBackend(t, 'the int64 boundaries are stored exactly', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const lowest = await createPlant('{"id":-9223372036854775808,"name":"Lowest"}')
  t.equal(lowest.statusCode, 200)
  t.same(lowest.body, { name: 'Lowest' })
  const highest = await createPlant('{"id":9223372036854775807,"name":"Highest","tag":"edge"}')
  t.equal(highest.statusCode, 200)
  t.same(highest.body, { name: 'Highest', tag: 'edge' })
  t.same(await database.readStoredPlants(), [
    { id: -9223372036854775808n, name: 'Lowest', tag: null },
    { id: 9223372036854775807n, name: 'Highest', tag: 'edge' },
  ])

  t.equal((await createPlant('{"id":9223372036854775807,"name":"Highest","tag":"edge"}')).statusCode, 200,
    'a retry of the highest id finds the same plant')
  const conflict = await createPlant('{"id":9223372036854775807,"name":"Other","tag":"edge"}')
  t.equal(conflict.statusCode, 409)
  t.same(conflict.body, { error: 40901, message: 'a plant with id 9223372036854775807 already exists with a different name or tag' },
    'the conflict names the id exactly')
  t.equal((await database.readStoredPlants()).length, 2, 'the conflict stored nothing')
})

testOnEveryBackend(t, 'two ids that differ only above 2^53 are two different plants', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  t.equal((await createPlant('{"id":9007199254740993,"name":"Odd"}')).statusCode, 200)
  t.equal((await createPlant('{"id":9007199254740992,"name":"Even"}')).statusCode, 200)
  const expectedRows = [
    { id: 9007199254740992n, name: 'Even', tag: null },
    { id: 9007199254740993n, name: 'Odd', tag: null },
  ]
  t.same(await database.readStoredPlants(), expectedRows)

  t.equal((await createPlant('{"id":9007199254740993,"name":"Odd"}')).statusCode, 200, 'a replay of 2^53+1 with its own name')
  t.equal((await createPlant('{"id":9007199254740992,"name":"Even"}')).statusCode, 200, 'a replay of 2^53 with its own name')
  const oddAsEven = await createPlant('{"id":9007199254740993,"name":"Even"}')
  t.equal(oddAsEven.statusCode, 409, '2^53+1 with the name of 2^53')
  t.same(oddAsEven.body, { error: 40901, message: 'a plant with id 9007199254740993 already exists with a different name or tag' })
  const evenAsOdd = await createPlant('{"id":9007199254740992,"name":"Odd"}')
  t.equal(evenAsOdd.statusCode, 409, '2^53 with the name of 2^53+1')
  t.same(evenAsOdd.body, { error: 40901, message: 'a plant with id 9007199254740992 already exists with a different name or tag' })
  t.same(await database.readStoredPlants(), expectedRows, 'the conflicts changed nothing')
})

testOnEveryBackend(t, 'an id outside the int64 range is a 40004', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  t.equal((await createPlant('{"id":9223372036854775807,"name":"Highest"}')).statusCode, 200)
  for (const id of ['9223372036854775808', '-9223372036854775809', '1e19', '1e400', '-1e400']) {
    const response = await createPlant(`{"id":${id},"name":"Out of range"}`)
    t.equal(response.statusCode, 400, id)
    t.same(response.body, { error: 40004, message: int64RangeMessage }, id)
  }
  t.same(await database.readStoredPlants(), [{ id: 9223372036854775807n, name: 'Highest', tag: null }], 'nothing stored, nothing changed')
})

t.test('an int64 field added to the spec is read exactly and range-checked with no code change', async (t) => {
  const { document, yamlText } = loadOpenApiDocument()
  const modified = structuredClone(document) as typeof document & {
    components: { schemas: { Plant: { properties: Record<string, unknown> } } }
  }
  modified.components.schemas.Plant.properties.stock = { type: 'integer', format: 'int64' }
  const { createPlant } = await buildTestApp(t, {}, { openApi: { document: modified, yamlText } })

  t.equal((await createPlant('{"id":1,"name":"Fern","stock":9223372036854775807}')).statusCode, 200)
  const outOfRange = await createPlant('{"id":2,"name":"Fern","stock":9223372036854775808}')
  t.equal(outOfRange.statusCode, 400)
  t.same(outOfRange.body, { error: 40004, message: 'body.stock must be an integer from -9223372036854775808 to 9223372036854775807' })
  const fraction = await createPlant('{"id":3,"name":"Fern","stock":9007199254740993.5}')
  t.same(fraction.body, { error: 40003, message: 'body.stock must be integer' })
})
