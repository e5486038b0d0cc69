import t from 'tap'
import { readStoredPlants } from './support/stored-plants.js'
import { buildTestApp, testToken } from './support/helper.js'

// How POST /plants checks its body against NewPlant: no type coercion, an object with its
// required fields, and a body at all. Each way a body can be wrong is a 40003 naming what is
// wrong, and rejected requests never store or change anything.

t.test('no type coercion of id', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  t.equal((await createPlant({ id: 12, name: 'Fern' })).statusCode, 200)
  const cases: ReadonlyArray<[string, unknown]> = [
    ['a string id is not an id', '12'],
    ['a boolean id is not an id', true],
    ['a null id is not an id', null],
    ['an array of one number is not an id', [5]],
    ['a fraction is not an id', 1.5],
    ['an object is not an id', {}],
  ]
  for (const [name, id] of cases) {
    await t.test(name, async (t) => {
      const response = await createPlant({ id, name: 'Not a fern' })
      t.equal(response.statusCode, 400)
      t.match(response.body, { error: 40003, message: /^body\.id\b/ }, 'the message names body.id')
    })
  }
  t.same(readStoredPlants(databaseFile), [{ id: 12n, name: 'Fern', tag: null }], 'nothing stored, nothing changed')
})

t.test('no type coercion of name', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  t.equal((await createPlant({ id: 1, name: '123' })).statusCode, 200)
  for (const name of [123, null, true]) {
    await t.test(`a ${name === null ? 'null' : typeof name} name is not a name`, async (t) => {
      for (const id of [1, 2]) {
        const response = await createPlant({ id, name })
        t.equal(response.statusCode, 400, `id ${id}`)
        t.match(response.body, { error: 40003, message: /^body\.name\b/ }, 'the message names body.name')
      }
    })
  }
  t.same(readStoredPlants(databaseFile), [{ id: 1n, name: '123', tag: null }], 'the name "123" is untouched and nothing else is stored')
})

t.test('no type coercion of tag', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  t.equal((await createPlant({ id: 1, name: 'Fern', tag: '5' })).statusCode, 200)
  for (const tag of [5, null, false]) {
    await t.test(`a ${tag === null ? 'null' : typeof tag} tag is not a tag`, async (t) => {
      for (const id of [1, 2]) {
        const response = await createPlant({ id, name: 'Fern', tag })
        t.equal(response.statusCode, 400, `id ${id}`)
        t.match(response.body, { error: 40003, message: /^body\.tag\b/ }, 'the message names body.tag')
      }
    })
  }
  t.same(readStoredPlants(databaseFile), [{ id: 1n, name: 'Fern', tag: '5' }])
})

t.test('a body that is not an object is a 40003', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  for (const body of ['[]', '[{"id":1,"name":"a"}]', '"plant"', '42', '-1.5', 'null', 'true']) {
    const response = await createPlant(body)
    t.equal(response.statusCode, 400, body)
    t.match(response.body, { error: 40003, message: /^body\b/ }, body)
  }
  t.same(readStoredPlants(databaseFile), [])
})

t.test('a missing field is a 40003 that names it', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  for (const [body, field] of [['{"name":"a"}', 'body.id'], ['{"id":1}', 'body.name']] as const) {
    const response = await createPlant(body)
    t.equal(response.statusCode, 400, body)
    t.same(response.body, { error: 40003, message: `${field} is required` }, body)
  }
  t.same(readStoredPlants(databaseFile), [])
})

t.test('a POST with no body and no content-type is a 40003: the request body is required', async (t) => {
  const { send, databaseFile } = await buildTestApp(t)
  const response = await send({ method: 'POST', url: '/plants', headers: { authorization: `Bearer ${testToken}` } })
  t.equal(response.statusCode, 400)
  t.same(response.body, { error: 40003, message: 'the request body is required' })
  t.same(readStoredPlants(databaseFile), [])
})
