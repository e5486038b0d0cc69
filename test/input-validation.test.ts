import t from 'tap'
import { loadOpenApiDocument } from '../src/spec/openapi-document.js'
import { readStoredPlants } from './support/stored-plants.js'
import { buildTestApp, testToken } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// How POST /plants reads its body: exact JSON, exact int64 ids, no type coercion, and the
// Error codes of openapi.yaml's table for every way a body can be wrong. Rejected requests
// never store or change anything.

const int64RangeMessage = 'body.id must be an integer from -9223372036854775808 to 9223372036854775807'

// A NewPlant whose undeclared property `x` holds `levels` nested arrays: the body itself is one
// level more.
function nestedBody (levels: number): string {
  return `{"id":1,"name":"Deep","x":${'['.repeat(levels)}${']'.repeat(levels)}}`
}

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

t.test('a fraction is not an id even when its double is an integer', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  for (const id of ['9007199254740993.5', '12345678901234567890.5', '1e-400', '-1e-400']) {
    const response = await createPlant(`{"id":${id},"name":"Fraction"}`)
    t.equal(response.statusCode, 400, id)
    t.same(response.body, { error: 40003, message: 'body.id must be integer' }, id)
  }
  t.same(readStoredPlants(databaseFile), [], 'nothing stored')
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

t.test('__proto__ and constructor are not allowed property names', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  const cases: ReadonlyArray<[string, string]> = [
    ['{"__proto__":{"polluted":true},"id":1,"name":"a"}', 'body.__proto__'],
    ['{"id":1,"name":"a","__proto__":{"polluted":true}}', 'body.__proto__'],
    ['{"id":1,"name":"a","constructor":{"prototype":{"polluted":true}}}', 'body.constructor'],
    ['{"id":1,"name":"a","x":{"__proto__":{}}}', 'body.x.__proto__'],
    ['{"id":1,"name":"a","x":{"__proto__":{"polluted":true}}}', 'body.x.__proto__'],
    ['{"id":1,"name":"a","x":[{"constructor":{"prototype":{"polluted":true}}}]}', 'body.x[0].constructor'],
    ['{"id":1,"name":"a","__proto\\u005f_":{"polluted":true}}', 'body.__proto__'],
  ]
  for (const [body, path] of cases) {
    const response = await createPlant(body)
    t.equal(response.statusCode, 400, body)
    t.same(response.body, { error: 40005, message: `${path} is not an allowed property name` }, body)
  }
  t.same(readStoredPlants(databaseFile), [], 'nothing stored')
  t.notOk(Object.hasOwn(Object.prototype, 'polluted'), 'Object.prototype is not polluted')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'a new object inherits nothing')
})

t.test('malformed JSON is a 40001', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  const cases: ReadonlyArray<[string, string]> = [
    ['an unfinished object', '{"id":1,'],
    ['unquoted property names', '{id:1,name:"a"}'],
    ['single quotes', "{'id':1,'name':'a'}"],
    ['a trailing comma', '{"id":1,"name":"a",}'],
    ['trailing garbage', '{"id":1,"name":"a"} x'],
    ['a second document', '{"id":1,"name":"a"}{"id":2,"name":"b"}'],
    ['NaN', '{"id":NaN,"name":"a"}'],
    ['Infinity', '{"id":Infinity,"name":"a"}'],
    ['a leading zero', '{"id":01,"name":"a"}'],
    ['a leading plus', '{"id":+1,"name":"a"}'],
    ['a raw control character in a string', '{"id":1,"name":"a\nb"}'],
    ['an unknown escape', '{"id":1,"name":"\\x41"}'],
    ['a comment', '{"id":1,/* plant */"name":"a"}'],
  ]
  for (const [name, body] of cases) {
    const response = await createPlant(body)
    t.equal(response.statusCode, 400, name)
    t.match(response.body, { error: 40001, message: /^invalid JSON at character \d+: expected / }, name)
  }
  t.same(readStoredPlants(databaseFile), [])
})

t.test('an empty body with content-type application/json is a 40001', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  const response = await createPlant('')
  t.equal(response.statusCode, 400)
  t.same(response.body, { error: 40001, message: 'the body is empty' })
  t.same(readStoredPlants(databaseFile), [])
})

t.test('a whitespace-only body is a 40001', async (t) => {
  const { createPlant } = await buildTestApp(t)
  const response = await createPlant(' \n\t\r ')
  t.equal(response.statusCode, 400)
  t.same(response.body, { error: 40001, message: 'the body is empty' })
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

t.test('a duplicated key is a 40001, even with the same value', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  t.equal((await createPlant({ id: 1, name: 'Fern' })).statusCode, 200)
  const cases: ReadonlyArray<[string, string]> = [
    ['{"id":1,"name":"Fern","name":"Fern"}', 'body.name appears more than once'],
    ['{"id":1,"name":"Changed","id":2}', 'body.id appears more than once'],
    ['{"id":1,"name":"Fern","tag":"a","tag":"b"}', 'body.tag appears more than once'],
    ['{"id":3,"name":"Fern","x":{"k":1,"k":1}}', 'body.x.k appears more than once'],
  ]
  for (const [body, message] of cases) {
    const response = await createPlant(body)
    t.equal(response.statusCode, 400, body)
    t.same(response.body, { error: 40001, message }, body)
  }
  t.same(readStoredPlants(databaseFile), [{ id: 1n, name: 'Fern', tag: null }], 'nothing stored, nothing changed')
})

t.test('nesting up to 64 levels is accepted', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  const sixty = await createPlant(nestedBody(60))
  t.equal(sixty.statusCode, 200, '60 levels inside an undeclared property')
  t.same(sixty.body, { name: 'Deep' })
  t.equal((await createPlant(nestedBody(63))).statusCode, 200, '64 levels in all')
  t.same(readStoredPlants(databaseFile), [{ id: 1n, name: 'Deep', tag: null }])
})

t.test('nesting deeper than 64 levels is a 40001, answered quickly', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t, { BODY_LIMIT: 1_000_000 })
  const cases: ReadonlyArray<[string, string]> = [
    ['65 levels in all', nestedBody(64)],
    ['65 levels inside an undeclared property', nestedBody(65)],
    ['100000 levels inside an undeclared property', nestedBody(100_000)],
    ['100000 unclosed levels inside an undeclared property', `{"id":1,"name":"Deep","x":${'['.repeat(100_000)}`],
    ['100000 levels of objects as the body', '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)],
  ]
  for (const [name, body] of cases) {
    const started = performance.now()
    const response = await createPlant(body)
    const elapsed = performance.now() - started
    t.equal(response.statusCode, 400, name)
    t.same(response.body, { error: 40001, message: 'the body nests deeper than 64 levels' }, name)
    t.ok(elapsed < 1000, `${name}: answered in ${Math.round(elapsed)} ms, under a second`)
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
