import t from 'tap'
import { readStoredPlants } from './support/stored-plants.js'
import { buildTestApp, testToken } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// Which text POST /plants stores: valid UTF-8 with no NUL character and no lone surrogate in
// a name or tag, each refused as a 40002; surrogate pairs stored exactly on every backend.

testOnEveryBackend(t, 'a NUL character is not text', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const cases: ReadonlyArray<[string, string]> = [
    ['{"id":1,"name":"a\\u0000b"}', 'body.name contains a NUL character'],
    ['{"id":1,"name":"\\u0000"}', 'body.name contains a NUL character'],
    ['{"id":1,"name":"Fern","tag":"x\\u0000"}', 'body.tag contains a NUL character'],
    ['{"id":1,"name":"a\u0000b"}', 'body.name contains a NUL character'],
    ['{"id":1,"name":"Fern","note":{"deep":"\u0000"}}', 'body.note.deep contains a NUL character'],
  ]
  for (const [body, message] of cases) {
    const response = await createPlant(body)
    t.equal(response.statusCode, 400, body)
    t.same(response.body, { error: 40002, message }, body)
  }
  t.same(await database.readStoredPlants(), [])
})

testOnEveryBackend(t, 'a lone surrogate is not text', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const cases: ReadonlyArray<[string, string]> = [
    ['{"id":1,"name":"\\ud800"}', 'body.name contains a lone surrogate'],
    ['{"id":1,"name":"\\udc00x"}', 'body.name contains a lone surrogate'],
    ['{"id":1,"name":"Fern","tag":"\\ud800"}', 'body.tag contains a lone surrogate'],
    ['{"id":1,"name":"Fern","tag":"\\udc00x"}', 'body.tag contains a lone surrogate'],
    ['{"id":1,"name":"\\udf35\\ud83c"}', 'body.name contains a lone surrogate'],
    ['{"id":1,"name":"\\ud83cx\\udf35"}', 'body.name contains a lone surrogate'],
  ]
  for (const [body, message] of cases) {
    const response = await createPlant(body)
    t.equal(response.statusCode, 400, body)
    t.same(response.body, { error: 40002, message }, body)
  }
  t.same(await database.readStoredPlants(), [])
})

// The spec allows properties it does not declare, and the service never stores them, so what
// they hold is no concern of any store: only the unescaped NUL, which is not JSON, is refused.
testOnEveryBackend(t, 'an undeclared property may hold any JSON text, and is neither stored nor echoed', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const bodies = [
    '{"id":1,"name":"Fern","note":{"deep":"\\u0000"}}',
    '{"id":1,"name":"Fern","\\u0000key":["\\ud800","x\\udc00"]}',
    '{"id":1,"name":"Fern","note":"\\udf35\\ud83c"}',
  ]
  for (const body of bodies) {
    const response = await createPlant(body)
    t.equal(response.statusCode, 200, body)
    t.same(response.body, { name: 'Fern' }, body)
  }
  t.same(await database.readStoredPlants(), [{ id: 1n, name: 'Fern', tag: null }])
})

testOnEveryBackend(t, 'a surrogate pair is text and is stored exactly', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const escaped = await createPlant('{"id":1,"name":"\\ud83c\\udf35","tag":"\\uD83C\\uDF35 cactus"}')
  t.equal(escaped.statusCode, 200)
  t.same(escaped.body, { name: '🌵', tag: '🌵 cactus' })
  const raw = await createPlant('{"id":2,"name":"🌵 Saguaro","tag":"日本"}')
  t.equal(raw.statusCode, 200)
  t.same(raw.body, { name: '🌵 Saguaro', tag: '日本' })
  t.same(await database.readStoredPlants(), [
    { id: 1n, name: '\u{1F335}', tag: '\u{1F335} cactus' },
    { id: 2n, name: '\u{1F335} Saguaro', tag: '\u65E5\u672C' },
  ])
  t.equal((await createPlant({ id: 1, name: '🌵', tag: '🌵 cactus' })).statusCode, 200, 'the escaped and the raw emoji are the same text')
})

t.test('a body that is not valid UTF-8 is a 40002', async (t) => {
  const { send, databaseFile } = await buildTestApp(t)
  const prefix = Buffer.from('{"id":1,"name":"')
  const suffix = Buffer.from('"}')
  const cases: ReadonlyArray<[string, Buffer]> = [
    ['a 0xff byte', Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x31, 0x2c, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])],
    ['a truncated two-byte sequence', Buffer.concat([prefix, Buffer.from([0xc3]), suffix])],
    ['an overlong encoding of "/"', Buffer.concat([prefix, Buffer.from([0xc0, 0xaf]), suffix])],
    ['an encoded surrogate', Buffer.concat([prefix, Buffer.from([0xed, 0xa0, 0x80]), suffix])],
  ]
  for (const [name, payload] of cases) {
    const response = await send({
      method: 'POST',
      url: '/plants',
      headers: { authorization: `Bearer ${testToken}`, 'content-type': 'application/json' },
      payload,
    })
    t.equal(response.statusCode, 400, name)
    t.same(response.body, { error: 40002, message: 'the body is not valid UTF-8' }, name)
  }
  t.same(readStoredPlants(databaseFile), [])
})
