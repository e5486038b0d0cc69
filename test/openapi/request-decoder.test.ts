import t from 'tap'
import { numericParameterReader } from '../../src/int64/numeric-parameters.js'
import { parseJsonExactly } from '../../src/json/parse-json-exactly.js'
import { loadOpenApiDocument, type OpenApiDocument, type OperationEntry } from '../../src/openapi/openapi-document.js'
import { compileRequestDecoder, type DecodedParts } from '../../src/openapi/request-decoder.js'

// What a handler receives: every int64 the spec declares, in parameters and in the body at any
// depth (through $ref, allOf, arrays and a schema that refers to itself), as the exact bigint; all
// else as it was.

const document = {
  openapi: '3.1.0',
  paths: {
    '/things/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
      post: {
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', format: 'int32' } },
          { $ref: '#/components/parameters/After' },
        ],
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
      },
    },
    '/plain': { get: {} },
  },
  components: {
    parameters: { After: { name: 'after', in: 'query', schema: { type: 'integer', format: 'int64' } } },
    schemas: {
      Base: { properties: { id: { type: 'integer', format: 'int64' }, owner: { type: ['integer', 'null'], format: 'int64' } } },
      Thing: {
        allOf: [
          { $ref: '#/components/schemas/Base' },
          { properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Thing' } }, count: { type: 'integer' } } },
        ],
      },
    },
  },
} as unknown as OpenApiDocument

const entryOf = (path: string, method: 'get' | 'post'): OperationEntry =>
  ({ path, method, operation: (document.paths[path] as Record<string, object>)[method]! })

// Parameters as the validator hands them on: numbers read from their text, which is kept.
function parametersOf (texts: Record<string, string>): Record<string, unknown> {
  const names = Object.fromEntries(Object.keys(texts).map((name) => [name, { type: 'integer' }]))
  const parameters: Record<string, unknown> = { ...texts }
  numericParameterReader({ properties: names })!(parameters)
  return parameters
}

t.test('int64 parameters and body fields become exact bigints; nothing else changes', async (t) => {
  const decode = compileRequestDecoder(document, entryOf('/things/{id}', 'post'))
  if (decode === undefined) return t.fail('a decoder')
  const request: DecodedParts = {
    params: parametersOf({ id: '9223372036854775807' }),
    query: parametersOf({ limit: '20', after: '-9223372036854775808' }),
    body: parseJsonExactly('{"id": 9007199254740993, "owner": null, "count": 5, "extra": 9007199254740993,' +
      ' "children": [{"id": 1e3, "owner": 12345678901234567, "children": []}]}'),
  }
  decode(request)
  t.same(request.params, { id: 9223372036854775807n })
  t.strictSame(request.query, { limit: 20, after: -9223372036854775808n }, 'an int32 stays a number')
  const body = request.body as Record<string, unknown>
  t.equal(body.id, 9007199254740993n, 'exact beyond 2^53')
  t.equal(body.owner, null, 'a nullable int64 that is null stays null')
  t.equal(body.count, 5)
  t.equal(typeof body.extra, 'number', 'an undeclared property is left as it is')
  t.strictSame(body.children, [{ id: 1000n, owner: 12345678901234567n, children: [] }], 'through arrays and a recursive schema')
})

t.test('an operation that declares no int64 needs no decoder', async (t) => {
  t.equal(compileRequestDecoder(document, entryOf('/plain', 'get')), undefined)
})

t.test('the service\'s own operations: the plant ids are decoded', async (t) => {
  const { document: spec } = loadOpenApiDocument()
  const getPlant = compileRequestDecoder(spec, { path: '/plants/{id}', method: 'get', operation: spec.paths['/plants/{id}']!.get! })
  const request: DecodedParts = { params: parametersOf({ id: '9007199254740993' }), query: {}, body: undefined }
  getPlant?.(request)
  t.same(request.params, { id: 9007199254740993n })
  t.equal(compileRequestDecoder(spec, { path: '/healthz', method: 'get', operation: spec.paths['/healthz']!.get! }), undefined)
})
