import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import t from 'tap'
import { parse as parseYaml } from 'yaml'
import { loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { buildTestApp } from './support/helper.js'
import { readStoredIds } from './support/stored-plants.js'

// The examples in openapi.yaml are part of the contract: consumers copy them and the docs show
// them. Each must match its schema, and the createPlant examples must be what the service does.

const { document, yamlText } = loadOpenApiDocument()
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
ajv.addSchema(document, 'openapi')

interface FoundExample {
  readonly where: string
  readonly schemaPointer: string
  readonly value: unknown
}

function escape (part: string): string {
  return part.replaceAll('~', '~0').replaceAll('/', '~1')
}

// Every `example`, `examples` map of a media type, and `examples` list of a schema, with the
// JSON pointer of the schema it illustrates.
function findExamples (node: unknown, pointer: string, found: FoundExample[] = []): FoundExample[] {
  if (node === null || typeof node !== 'object') return found
  const object = node as Record<string, unknown>
  const isMediaType = /\/content\/[^/]+$/.test(pointer)
  if (isMediaType && object.schema !== undefined) {
    if ('example' in object) found.push({ where: `${pointer}/example`, schemaPointer: `${pointer}/schema`, value: object.example })
    for (const [name, example] of Object.entries((object.examples ?? {}) as Record<string, { value?: unknown }>)) {
      found.push({ where: `${pointer}/examples/${name}`, schemaPointer: `${pointer}/schema`, value: example.value })
    }
  }
  if (!isMediaType && Array.isArray(object.examples) && (object.type !== undefined || object.allOf !== undefined)) {
    object.examples.forEach((value, index) => found.push({ where: `${pointer}/examples/${index}`, schemaPointer: pointer, value }))
  }
  for (const [key, child] of Object.entries(object)) findExamples(child, `${pointer}/${escape(key)}`, found)
  return found
}

const examples = findExamples(document, '#')

// JSON with bigints written as their digits.
function toJson (value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => typeof item === 'bigint' ? `bigint:${item}` : item)
    .replace(/"bigint:(-?\d+)"/g, '$1')
}

t.test('the spec has request, response and schema examples', async (t) => {
  t.ok(examples.some(({ where }) => where.includes('/requestBody/')), 'request examples')
  t.ok(examples.some(({ where }) => where.includes('/responses/')), 'response examples')
  t.ok(examples.some(({ where }) => where.startsWith('#/components/schemas/')), 'schema examples')
})

t.test('every example matches the schema it illustrates', async (t) => {
  for (const { where, schemaPointer, value } of examples) {
    const validate = ajv.compile({ $ref: `openapi${schemaPointer}` })
    t.ok(validate(value), `${where}${validate.errors ? ': ' + ajv.errorsText(validate.errors) : ''}`)
  }
})

t.test('a schema check that would pass anything is not what passes them', async (t) => {
  const validate = ajv.compile({ $ref: 'openapi#/components/schemas/NewPlant' })
  t.notOk(validate({ id: 1 }), 'a NewPlant without a name fails')
  t.notOk(validate({ id: '1', name: 'Fern' }), 'a string id fails')
})

t.test('each createPlant request example, sent to the service, is answered as the response example of its name', async (t) => {
  const { createPlant, databaseFile } = await buildTestApp(t)
  // Read again with exact integers: as plain numbers, ids beyond 2^53 would be rounded.
  const exactDocument = parseYaml(yamlText, { intAsBigInt: true }) as typeof document
  const operation = exactDocument.paths['/plants']?.post as unknown as {
    requestBody: { content: { 'application/json': { examples: Record<string, { value: unknown }> } } }
    responses: { 200: { content: { 'application/json': { examples: Record<string, { value: unknown }> } } } }
  }
  const requests = operation.requestBody.content['application/json'].examples
  const answers = operation.responses[200].content['application/json'].examples
  for (const [name, { value }] of Object.entries(requests)) {
    const created = await createPlant(toJson(value))
    t.equal(created.statusCode, 200, name)
    if (answers[name] !== undefined) t.same(created.body, answers[name].value, `${name}: the documented answer`)
  }
  t.same(readStoredIds(databaseFile), [10n, 11n, 9007199254740993n], 'every example id stored exactly')
})
