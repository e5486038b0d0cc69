import t from 'tap'
import { readStoredPlants } from './support/stored-plants.js'
import { buildTestApp } from './support/helper.js'

// How POST /plants parses its body: exact JSON only (a 40001 for malformed, empty or
// whitespace-only bodies, duplicated keys and nesting deeper than 64 levels). Any property name the
// schema allows is read as a name, __proto__ and constructor included, and never reaches a
// prototype. Rejected requests never store or change anything.

// A NewPlant whose undeclared property `x` holds `levels` nested arrays: the body itself is one
// level more.
function nestedBody (levels: number): string {
  return `{"id":1,"name":"Deep","x":${'['.repeat(levels)}${']'.repeat(levels)}}`
}

t.test('__proto__ and constructor are names like any other: accepted where the schema allows, never a prototype', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  const cases: readonly string[] = [
    '{"__proto__":{"polluted":true},"id":1,"name":"a"}',
    '{"id":2,"name":"a","__proto__":{"polluted":true}}',
    '{"id":3,"name":"a","constructor":{"prototype":{"polluted":true}}}',
    '{"id":4,"name":"a","x":{"__proto__":{}}}',
    '{"id":5,"name":"a","x":{"__proto__":{"polluted":true}}}',
    '{"id":6,"name":"a","x":[{"constructor":{"prototype":{"polluted":true}}}]}',
    '{"id":7,"name":"a","__proto\\u005f_":{"polluted":true}}',
    '{"id":8,"name":"a","__proto__":{"name":"b","id":9}}',
  ]
  for (const body of cases) {
    const response = await createPlant(body)
    t.same([response.statusCode, response.body], [200, { name: 'a' }], body)
  }
  t.same(readStoredPlants(databaseFile).map(({ id, name }) => [id, name]), [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n].map((id) => [id, 'a']),
    'each stored as the properties Plant declares, and nothing a prototype could have lent it')
  t.notOk(Object.hasOwn(Object.prototype, 'polluted'), 'Object.prototype is not polluted')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'a new object inherits nothing')
  const duplicated = await createPlant('{"id":10,"name":"a","__proto__":1,"__proto__":2}')
  t.same(duplicated.body, { error: 40001, message: 'body.__proto__ appears more than once' }, 'a duplicated __proto__ is a duplicated key')
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
