import t from 'tap'
import { entityTagOf } from '../src/http/entity-tags.js'
import { buildTestApp, testToken } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// PUT /plants/{id}: the body replaces the stored plant (only what Plant declares), 200 with the
// plant and its new ETag once durable, 404 for an id no plant has, the same plant again a 200
// that changes nothing, and If-Match holding two editors apart (412 for a stale tag).

const asCaller = { authorization: `Bearer ${testToken}`, 'content-type': 'application/json' }

testOnEveryBackend(t, 'an update replaces the plant, durably, across a restart', async (t, database) => {
  const first = await buildTestApp(t, { DATABASE_URL: database.url })
  await first.createPlant('{"id":9007199254740993,"name":"Monstera","tag":"aroid"}')
  await first.createPlant('{"id":9007199254740992,"name":"Neighbour"}')
  const updated = await first.send({
    method: 'PUT', url: '/plants/9007199254740993', headers: asCaller, payload: '{"name":"Monstera","tag":"climber","size":"undeclared"}',
  })
  t.same([updated.statusCode, updated.body], [200, { name: 'Monstera', tag: 'climber' }], 'the plant as stored: undeclared properties dropped')
  t.equal(updated.headers.etag, entityTagOf('{"name":"Monstera","tag":"climber"}'), 'with its new tag')
  const untagged = await first.send({ method: 'PUT', url: '/plants/9007199254740993', headers: asCaller, payload: '{"name":"Monstera"}' })
  t.same(untagged.body, { name: 'Monstera' }, 'a property left out is gone')
  await first.app.close()

  const restarted = await buildTestApp(t, { DATABASE_URL: database.url })
  const read = await restarted.send({ method: 'GET', url: '/plants/9007199254740993', headers: asCaller })
  t.same([read.statusCode, read.body, read.headers.etag], [200, { name: 'Monstera' }, untagged.headers.etag], 'read back after a restart, with the same tag')
  t.same((await database.readStoredPlants()).map(({ id, name, tag }) => [id, name, tag]),
    [[9007199254740992n, 'Neighbour', null], [9007199254740993n, 'Monstera', null]], 'its neighbour untouched')
})

testOnEveryBackend(t, 'the same plant again changes nothing; an unknown id is a 404', async (t, database) => {
  const { createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url })
  const created = await createPlant({ id: 5, name: 'Fern', tag: 'shade' })
  const same = await send({ method: 'PUT', url: '/plants/5', headers: asCaller, payload: '{"tag":"shade","name":"Fern"}' })
  t.same([same.statusCode, same.body, same.headers.etag], [200, { name: 'Fern', tag: 'shade' }, created.headers.etag], 'a 200 with the same tag')
  const unknown = await send({ method: 'PUT', url: '/plants/6', headers: asCaller, payload: '{"name":"Fern"}' })
  t.same([unknown.statusCode, unknown.body], [404, { error: 40401, message: 'no plant has id 6' }])
  t.same((await database.readStoredPlants()).map(({ id }) => id), [5n], 'an update never creates')
})

testOnEveryBackend(t, 'two editors: the second, with the tag it read, gets a 412 and overwrites nothing', async (t, database) => {
  const { createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url })
  await createPlant({ id: 7, name: 'Ivy' })
  const read = await send({ method: 'GET', url: '/plants/7', headers: asCaller })
  const tag = read.headers.etag as string
  const firstEditor = await send({ method: 'PUT', url: '/plants/7', headers: { ...asCaller, 'if-match': tag }, payload: '{"name":"Ivy","tag":"climber"}' })
  t.equal(firstEditor.statusCode, 200, 'the first editor, with the current tag, updates')
  const secondEditor = await send({ method: 'PUT', url: '/plants/7', headers: { ...asCaller, 'if-match': tag }, payload: '{"name":"Ivy","tag":"hanging"}' })
  t.same([secondEditor.statusCode, (secondEditor.body as { error: number }).error], [412, 41201], 'the second, with the tag it read before, is refused')
  const now = await send({ method: 'GET', url: '/plants/7', headers: asCaller })
  t.same([now.body, now.headers.etag], [{ name: 'Ivy', tag: 'climber' }, firstEditor.headers.etag], 'the first editor\'s plant stands')
  const anyTag = await send({ method: 'PUT', url: '/plants/7', headers: { ...asCaller, 'if-match': '*' }, payload: '{"name":"Ivy"}' })
  t.equal(anyTag.statusCode, 200, '* lets an update of a stored plant go on')
  const gone = await send({ method: 'PUT', url: '/plants/8', headers: { ...asCaller, 'if-match': tag }, payload: '{"name":"Ivy"}' })
  t.equal(gone.statusCode, 404, 'a plant not stored is a 404, whatever If-Match says')
})

t.test('an update is checked as a create is: its body, its id, its token and its role', async (t) => {
  const { createPlant, send } = await buildTestApp(t)
  await createPlant({ id: 1, name: 'Fern' })
  const cases: Array<[string, string, Record<string, string>, number, number]> = [
    ['/plants/1', '{"tag":"no name"}', asCaller, 400, 40003],
    ['/plants/1', '{"name":', asCaller, 400, 40001],
    ['/plants/abc', '{"name":"Fern"}', asCaller, 400, 40003],
    ['/plants/9223372036854775808', '{"name":"Fern"}', asCaller, 400, 40004],
    ['/plants/1', '{"name":"Fern"}', { 'content-type': 'application/json' }, 401, 40101],
    ['/plants/1', '{"name":"Fern"}', { ...asCaller, 'content-type': 'text/plain' }, 415, 41501],
  ]
  for (const [url, payload, headers, status, code] of cases) {
    const answer = await send({ method: 'PUT', url, headers, payload })
    t.same([answer.statusCode, (answer.body as { error: number }).error], [status, code], `${url} ${payload}: ${status}`)
  }
  t.same((await send({ method: 'GET', url: '/plants/1', headers: asCaller })).body, { name: 'Fern' }, 'nothing changed')
})
