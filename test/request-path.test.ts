import t, { type Test } from 'tap'
import { type Document, parseDocument } from 'yaml'
import { loadOpenApiDocument, type OpenApiDocument } from '../src/openapi/openapi-document.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { StoreUnavailableError } from '../src/store/store-errors.js'
import { buildTestApp, otherTestToken, testToken } from './support/helper.js'
import { createInStore, plantRow } from './support/plant-rows.js'
import { testFolder } from './support/test-folder.js'

// The request path is built from openapi.yaml: an operation whose security or responses the
// service cannot honour stops start-up, saying why, and the security requirements are read as
// OpenAPI means them (any requirement, every scheme in it).

type Edit = (spec: Document) => void

function editedSpec (edit: Edit): { document: OpenApiDocument, yamlText: string } {
  const spec = parseDocument(loadOpenApiDocument().yamlText)
  edit(spec)
  return { document: spec.toJS() as OpenApiDocument, yamlText: spec.toString() }
}

async function buildWithEditedSpec (t: Test, edit: Edit): Promise<ReturnType<typeof buildTestApp>> {
  return buildTestApp(t, {}, { openApi: editedSpec(edit) })
}

async function refusalToStart (t: Test, edit: Edit): Promise<string> {
  const store = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` })
  const error = await buildTestApp(t, {}, { store, openApi: editedSpec(edit) })
    .then(() => undefined, (failure: unknown) => failure)
  t.ok(error instanceof Error, 'buildApp refuses')
  await t.rejects(createInStore(store, plantRow({ id: 1n, name: 'Fern' })), StoreUnavailableError, 'and closes the store it was given')
  return error instanceof Error ? error.message : ''
}

t.test('an operation that requires credentials but does not declare what refusing them answers does not start', async (t) => {
  const message = await refusalToStart(t, (spec) => { spec.deleteIn(['paths', '/plants/{id}', 'get', 'responses', '401']) })
  t.match(message, /GET \/plants\/{id} \(getPlant\) must declare the responses 401, which its security requirements may answer/)
})

t.test('a public operation that does not declare its rate limit\'s 429 does not start', async (t) => {
  const message = await refusalToStart(t, (spec) => { spec.deleteIn(['paths', '/openapi.json', 'get', 'responses', '429']) })
  t.match(message, /getOpenApiJson\) must declare the responses 429/)
})

t.test('an operation that does not declare what any request, or its body, may answer does not start', async (t) => {
  for (const [path, method, status, why] of [
    ['/plants', 'post', '413', 'its request body'], ['/plants', 'post', '415', 'its request body'],
    ['/healthz', 'get', '431', 'any request'], ['/plants/{id}', 'delete', '408', 'any request'],
  ] as const) {
    const message = await refusalToStart(t, (spec) => { spec.deleteIn(['paths', path, method, 'responses', status]) })
    t.match(message, new RegExp(`${method.toUpperCase()} ${path.replace(/[{}]/g, '\\$&')} \\(\\w+\\) must declare the responses ${status}, which ${why}`))
  }
})

t.test('a security scheme the service cannot check does not leave an operation open', async (t) => {
  const message = await refusalToStart(t, (spec) => {
    spec.setIn(['components', 'securitySchemes', 'apiKeyAuth'], { type: 'apiKey', in: 'header', name: 'X-Api-Key' })
    spec.setIn(['paths', '/plants/{id}', 'get', 'security'], [{ apiKeyAuth: [] }])
  })
  t.match(message, /getPlant\) requires security scheme apiKeyAuth, which this service cannot check/)
})

t.test('x-operator-token must name a token setting of the service', async (t) => {
  const message = await refusalToStart(t, (spec) => { spec.setIn(['paths', '/metrics', 'get', 'x-operator-token'], 'NO_SUCH_TOKEN') })
  t.match(message, /getMetrics\) names x-operator-token NO_SUCH_TOKEN, which is not a token setting of this service/)
})

t.test('every declared bearer scheme takes the service\'s credentials, and `security: []` makes an operation public', async (t) => {
  const { send } = await buildWithEditedSpec(t, (spec) => {
    spec.setIn(['components', 'securitySchemes', 'partnerAuth'], { type: 'http', scheme: 'Bearer' })
    spec.setIn(['paths', '/plants/{id}', 'get', 'security'], [{ partnerAuth: [] }])
    spec.setIn(['paths', '/plants', 'post', 'security'], [])
  })
  t.equal((await send({ method: 'GET', url: '/plants/1', headers: { authorization: `Bearer ${testToken}` } })).statusCode, 404)
  t.equal((await send({ method: 'GET', url: '/plants/1' })).statusCode, 401, 'still protected, by the other scheme')
  const created = await send({ method: 'POST', url: '/plants', headers: { 'content-type': 'application/json' }, payload: '{"id": 1, "name": "Fern"}' })
  t.equal(created.statusCode, 200, 'createPlant made public by the spec alone')
})

t.test('any requirement lets a request in (OR), and every scheme of one must accept it (AND)', async (t) => {
  const { send } = await buildWithEditedSpec(t, (spec) => {
    spec.setIn(['components', 'securitySchemes', 'partnerAuth'], { type: 'http', scheme: 'bearer' })
    spec.setIn(['paths', '/plants/{id}', 'get', 'security'], [{ bearerAuth: [], partnerAuth: [] }, { partnerAuth: [] }])
  })
  for (const token of [testToken, otherTestToken]) {
    t.equal((await send({ method: 'GET', url: '/plants/1', headers: { authorization: `Bearer ${token}` } })).statusCode, 404)
  }
  const refused = await send({ method: 'GET', url: '/plants/1', headers: { authorization: 'Bearer unknown-token' } })
  t.equal(refused.statusCode, 401)
  t.same(refused.body, { error: 40102, message: 'the bearer token is not valid' }, 'the first requirement\'s refusal')
})
