import t from 'tap'
import { buildTestApp, testToken } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'
import { allowOf, undeclaredMethodsOf } from './support/declared-methods.js'

// GET /plants/{id}: the stored Plant, 404 when no plant has the id, and a path id read with the
// exact int64 rules of a body's id.

const asCaller = { authorization: `Bearer ${testToken}` }

testOnEveryBackend(t, 'a created plant is read back as it was answered', async (t, database) => {
  const { createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url })
  const created = await createPlant({ id: 10, name: 'Monstera', tag: 'aroid', undeclared: true })
  await createPlant({ id: 11, name: 'Fern' })
  const read = await send({ method: 'GET', url: '/plants/10', headers: asCaller })
  t.equal(read.statusCode, 200)
  t.equal(read.response.body, created.response.body, 'the same bytes as the create answered')
  t.same(read.body, { name: 'Monstera', tag: 'aroid' })
  t.match(read.headers['content-type'], /^application\/json; charset=utf-8/)
  t.equal((await send({ method: 'GET', url: '/plants/11', headers: asCaller })).response.body, '{"name":"Fern"}', 'no tag key')
})

testOnEveryBackend(t, 'ids beyond 2^53 and at the int64 limits are read exactly', async (t, database) => {
  const { createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url })
  for (const id of ['9007199254740993', '9007199254740992', '9223372036854775807', '-9223372036854775808']) {
    await createPlant(`{"id":${id},"name":"plant ${id}"}`)
  }
  for (const id of ['9007199254740993', '9007199254740992', '9223372036854775807', '-9223372036854775808']) {
    const read = await send({ method: 'GET', url: `/plants/${id}`, headers: asCaller })
    t.same([read.statusCode, read.body], [200, { name: `plant ${id}` }], id)
  }
})

t.test('an id with no plant is a 404 with the Error body', async (t) => {
  const { send } = await buildTestApp(t)
  const missing = await send({ method: 'GET', url: '/plants/404', headers: asCaller })
  t.equal(missing.statusCode, 404)
  t.same(missing.body, { error: 40401, message: 'no plant has id 404' })
})

t.test('a path id is read as a body id is: JSON integers only, exact, within int64', async (t) => {
  const { createPlant, send } = await buildTestApp(t)
  await createPlant({ id: 1000, name: 'Thousand' })
  await createPlant({ id: 0, name: 'Zero' })
  const cases: Array<[string, number, number | undefined, string]> = [
    ['abc', 400, 40003, 'params.id must be integer'],
    ['1.5', 400, 40003, 'params.id must be integer'],
    ['007', 400, 40003, 'params.id must be integer'],
    ['+7', 400, 40003, 'params.id must be integer'],
    ['%207', 400, 40003, 'params.id must be integer'],
    ['0x10', 400, 40003, 'params.id must be integer'],
    ['', 400, 40003, 'params.id must be integer'],
    ['9223372036854775808', 400, 40004, 'params.id must be an integer from -9223372036854775808 to 9223372036854775807'],
    ['-9223372036854775809', 400, 40004, 'params.id must be an integer from -9223372036854775808 to 9223372036854775807'],
    ['1e400', 400, 40004, 'params.id must be an integer from -9223372036854775808 to 9223372036854775807'],
    ['9007199254740993.5', 400, 40003, 'params.id must be integer'],
    ['1e3', 200, undefined, 'the integer 1000, as in a body'],
    ['1000.0', 200, undefined, 'the integer 1000, as in a body'],
    ['-0', 200, undefined, 'the integer 0'],
  ]
  for (const [id, status, code, message] of cases) {
    const answer = await send({ method: 'GET', url: `/plants/${id}`, headers: asCaller })
    if (code === undefined) {
      t.equal(answer.statusCode, status, `${JSON.stringify(id)}: ${message}`)
    } else {
      t.same([answer.statusCode, answer.body], [status, { error: code, message }], JSON.stringify(id))
    }
  }
})

t.test('reading a plant takes the bearer token, and no other method is allowed on a plant', async (t) => {
  const { send } = await buildTestApp(t)
  const anonymous = await send({ method: 'GET', url: '/plants/1' })
  t.same([anonymous.statusCode, (anonymous.body as { error: number }).error], [401, 40101])
  t.equal(anonymous.headers['www-authenticate'], 'Bearer realm="plant-store"')
  const badToken = await send({ method: 'GET', url: '/plants/abc', headers: { authorization: 'Bearer wrong-token' } })
  t.equal(badToken.statusCode, 401, 'credentials are checked before the id')
  for (const method of undeclaredMethodsOf('/plants/{id}')) {
    const answer = await send({ method, url: '/plants/1', headers: asCaller })
    t.same([answer.statusCode, answer.headers.allow], [405, allowOf('/plants/{id}')], method)
  }
})
