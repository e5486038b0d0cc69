import t, { type Test } from 'tap'
import { parseDocument } from 'yaml'
import { issueManagedToken } from '../../src/auth/managed-token.js'
import { loadOpenApiDocument, type OpenApiDocument, type SecurityRequirement } from '../../src/openapi/openapi-document.js'
import { buildTestApp, type CheckedResponse, type TestApp } from '../support/helper.js'

// An operation's `security` as OpenAPI means it: any one requirement lets a request in (OR), and a
// requirement needs every scheme it names to accept the credentials and find the roles it lists
// (AND). Shown on getPlant, with a test copy of openapi.yaml that declares a second bearer scheme,
// partnerAuth; both take the service's tokens, so the roles each requirement lists tell them apart.

// openapi.yaml, with partnerAuth declared and getPlant's security replaced.
function specWithGetPlantSecurity (security: SecurityRequirement[]): { document: OpenApiDocument, yamlText: string } {
  const spec = parseDocument(loadOpenApiDocument().yamlText)
  spec.setIn(['components', 'securitySchemes', 'partnerAuth'], { type: 'http', scheme: 'bearer' })
  spec.setIn(['paths', '/plants/{id}', 'get', 'security'], security)
  return { document: spec.toJS() as OpenApiDocument, yamlText: spec.toString() }
}

interface Tokens {
  readonly reader: string
  readonly writer: string
  readonly both: string
  readonly none: string
}

// The app with getPlant guarded by `security`, plant 1 stored, and a managed token for each set of roles.
async function appWith (t: Test, security: SecurityRequirement[], overrides = {}): Promise<{ app: TestApp, tokens: Tokens }> {
  const app = await buildTestApp(t, overrides, { openApi: specWithGetPlantSecurity(security) })
  t.equal((await app.createPlant({ id: 1, name: 'Fern' })).statusCode, 200)
  const issue = async (name: string, roles: string[]) => (await issueManagedToken(app.app.apiTokens, { name, roles })).token
  const tokens = {
    reader: await issue('reader', ['plants:read']),
    writer: await issue('writer', ['plants:write']),
    both: await issue('both', ['plants:read', 'plants:write']),
    none: await issue('none', []),
  }
  return { app, tokens }
}

async function getPlant (app: TestApp, token: string | undefined): Promise<CheckedResponse> {
  return app.send({ method: 'GET', url: '/plants/1', headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
}

function assertForbidden (t: Test, answer: CheckedResponse, roles: string, label: string): void {
  t.equal(answer.statusCode, 403, `${label}: 403`)
  t.same(answer.body, { error: 40301, message: `the token lacks a role this operation needs: ${roles}` }, `${label}: names ${roles}`)
  t.equal(answer.headers['www-authenticate'], `Bearer realm="plant-store", error="insufficient_scope", scope="${roles}"`, `${label}: challenge`)
}

t.test('an OR of two requirements: a token meeting either one passes', async (t) => {
  const { app, tokens } = await appWith(t, [{ bearerAuth: ['plants:read'] }, { partnerAuth: ['plants:write'] }])
  for (const holder of ['reader', 'writer', 'both'] as const) {
    const answer = await getPlant(app, tokens[holder])
    t.equal(answer.statusCode, 200, `${holder}: in`)
    t.same(answer.body, { name: 'Fern' }, `${holder}: the plant`)
  }
})

t.test('a token meeting no requirement gets the refusal of the first the spec lists', async (t) => {
  const readFirst = await appWith(t, [{ bearerAuth: ['plants:read'] }, { partnerAuth: ['plants:write'] }])
  assertForbidden(t, await getPlant(readFirst.app, readFirst.tokens.none), 'plants:read', 'plants:read listed first')
  const writeFirst = await appWith(t, [{ partnerAuth: ['plants:write'] }, { bearerAuth: ['plants:read'] }])
  assertForbidden(t, await getPlant(writeFirst.app, writeFirst.tokens.none), 'plants:write', 'plants:write listed first')

  const unknown = await getPlant(readFirst.app, 'not-a-token')
  t.equal(unknown.statusCode, 401, 'an unknown token: 401')
  t.same(unknown.body, { error: 40102, message: 'the bearer token is not valid' })
  t.equal(unknown.headers['www-authenticate'], 'Bearer realm="plant-store", error="invalid_token"')
  const missing = await getPlant(readFirst.app, undefined)
  t.same([missing.statusCode, missing.headers['www-authenticate']], [401, 'Bearer realm="plant-store"'], 'no credentials: 401')
})

t.test('a request refused by every requirement is one failed authentication, not one per requirement', async (t) => {
  const { app } = await appWith(t, [{ bearerAuth: ['plants:read'] }, { partnerAuth: ['plants:write'] }], { RATE_LIMIT_FAILED_AUTH: 2 })
  t.equal((await getPlant(app, 'not-a-token')).statusCode, 401, 'the first failure')
  t.equal((await getPlant(app, 'not-a-token')).statusCode, 401, 'the second: still within the limit of 2')
  const refused = await getPlant(app, 'not-a-token')
  t.equal(refused.statusCode, 429, 'the third: the address is refused')
  t.match(refused.body, { error: 42903, message: /^too many failed authentications from this address \(its limit is 2 per/ })
})

t.test('an AND of two schemes: both must accept, and the first that refuses is the answer', async (t) => {
  const { app, tokens } = await appWith(t, [{ bearerAuth: ['plants:read'], partnerAuth: ['plants:write'] }])
  const answer = await getPlant(app, tokens.both)
  t.same([answer.statusCode, answer.body], [200, { name: 'Fern' }], 'a token holding both roles: in')
  assertForbidden(t, await getPlant(app, tokens.reader), 'plants:write', 'bearerAuth accepts the reader, partnerAuth does not')
  assertForbidden(t, await getPlant(app, tokens.writer), 'plants:read', 'bearerAuth refuses the writer')
  assertForbidden(t, await getPlant(app, tokens.none), 'plants:read', 'both refuse: bearerAuth, listed first, answers')
  const missing = await getPlant(app, undefined)
  t.same([missing.statusCode, missing.body], [401, { error: 40101, message: 'bearer credentials are required' }], 'no credentials: 401')
})

t.test('an OR whose first requirement is an AND: the group must pass whole, or the other requirement', async (t) => {
  const { app, tokens } = await appWith(t, [{ bearerAuth: ['plants:read'], partnerAuth: ['plants:write'] }, { partnerAuth: ['plants:admin'] }])
  t.equal((await getPlant(app, tokens.both)).statusCode, 200, 'the group met')
  assertForbidden(t, await getPlant(app, tokens.reader), 'plants:write', 'the group half met: its refusal, as it is listed first')
  const admin = (await issueManagedToken(app.app.apiTokens, { name: 'admin', roles: ['plants:admin'] })).token
  t.equal((await getPlant(app, admin)).statusCode, 200, 'the other requirement met')
})
