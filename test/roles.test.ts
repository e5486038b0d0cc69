import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { issueManagedToken } from '../src/auth/managed-token.js'
import { listOperations, loadOpenApiDocument, securityOf } from '../src/openapi/openapi-document.js'
import { buildTestApp, type CheckedResponse, type TestApp, testToken } from './support/helper.js'
import { signingKey, signJwt, testAudience, testIssuer, writeJwksFile } from './support/jwt-keys.js'
import { testOnEveryBackend } from './support/test-databases.js'
import { testFolder } from './support/test-folder.js'

// Roles from the spec: each operation's security requirement names the roles it needs (read here
// from openapi.yaml, as the service reads them), and a valid token that lacks one gets a 403 that
// says which, before its body is read, and that is not counted as a failed authentication.

// A request for each plant operation, in an order that leaves plant 1 to the last (a delete).
const operations = {
  listPlants: { method: 'GET', url: '/plants' },
  getPlant: { method: 'GET', url: '/plants/1' },
  createPlant: { method: 'POST', url: '/plants', headers: { 'content-type': 'application/json' }, payload: '{"id":2,"name":"Fern"}' },
  updatePlant: { method: 'PUT', url: '/plants/1', headers: { 'content-type': 'application/json' }, payload: '{"name":"Seedling"}' },
  deletePlant: { method: 'DELETE', url: '/plants/1' },
} as const
const document = loadOpenApiDocument().document
const needs = Object.fromEntries(listOperations(document)
  .filter(({ operation }) => Object.hasOwn(operations, operation.operationId ?? ''))
  .map(({ operation }) => [operation.operationId, securityOf(document, operation).flatMap((requirement) => Object.values(requirement).flat()).join(' ')])
) as Record<keyof typeof operations, string>

t.test('every plant operation has a request here, and each needs one role', async (t) => {
  const plantOperations = listOperations(document).filter(({ operation }) => (operation as { tags?: string[] }).tags?.includes('plants')).map(({ operation }) => operation.operationId)
  t.same(plantOperations.sort(), Object.keys(operations).sort())
  t.same(Object.values(needs).filter((roles) => !/^plants:(read|write)$/.test(roles)), [])
})

async function call (app: TestApp, operation: keyof typeof operations, token: string, remoteAddress = '127.0.0.1'): Promise<CheckedResponse> {
  const { headers = {}, ...request } = operations[operation] as { method: 'GET', url: string, headers?: Record<string, string> }
  return app.send({ ...request, remoteAddress, headers: { ...headers, authorization: `Bearer ${token}` } })
}

function assertForbidden (t: Test, answer: CheckedResponse, roles: string): void {
  t.equal(answer.statusCode, 403)
  t.same(answer.body, { error: 40301, message: `the token lacks a role this operation needs: ${roles}` })
  t.equal(answer.headers['www-authenticate'], `Bearer realm="plant-store", error="insufficient_scope", scope="${roles}"`)
}

// Each operation, called with a token holding `held`: allowed exactly where it holds the role.
async function assertExactly (t: Test, app: TestApp, token: string, held: readonly string[]): Promise<void> {
  await app.createPlant({ id: 1, name: 'Seed' })
  for (const operation of Object.keys(operations) as Array<keyof typeof operations>) {
    const answer = await call(app, operation, token)
    if (held.includes(needs[operation])) t.ok(answer.statusCode < 300, `${operation}: allowed (${answer.statusCode})`)
    else assertForbidden(t, answer, needs[operation])
  }
}

testOnEveryBackend(t, 'managed tokens hold the roles they were issued with; without any named, every role', async (t, database) => {
  const app = await buildTestApp(t, { DATABASE_URL: database.url })
  const reader = await issueManagedToken(app.app.apiTokens, { name: 'reader', roles: ['plants:read'] })
  await assertExactly(t, app, reader.token, ['plants:read'])
  const writer = await issueManagedToken(app.app.apiTokens, { name: 'writer', roles: ['plants:write'] })
  await assertExactly(t, app, writer.token, ['plants:write'])
  const both = await issueManagedToken(app.app.apiTokens, { name: 'both', roles: ['plants:read', 'plants:write'] })
  await assertExactly(t, app, both.token, ['plants:read', 'plants:write'])
  const unnamed = await issueManagedToken(app.app.apiTokens, { name: 'unnamed' })
  await assertExactly(t, app, unnamed.token, ['plants:read', 'plants:write'])
  const none = await issueManagedToken(app.app.apiTokens, { name: 'none', roles: [] })
  await assertExactly(t, app, none.token, [])
})

t.test('JWTs hold the roles of their scope claim, or else of scp; API_TOKENS hold every role', async (t) => {
  const key = await signingKey('key-1')
  const app = await buildTestApp(t, { JWT_ISSUER: testIssuer, JWT_AUDIENCE: testAudience, JWT_JWKS_FILE: writeJwksFile(testFolder(t), [key]) })
  await assertExactly(t, app, await signJwt(key, { sub: 'scope-reader', scope: 'plants:read openid' }), ['plants:read'])
  await assertExactly(t, app, await signJwt(key, { sub: 'scp-writer', scp: ['plants:write'] }), ['plants:write'])
  await assertExactly(t, app, await signJwt(key, { sub: 'scope-wins', scope: 'plants:read', scp: ['plants:write'] }), ['plants:read'])
  await assertExactly(t, app, await signJwt(key, { sub: 'no-scope', scope: undefined }), [])
  await assertExactly(t, app, testToken, ['plants:read', 'plants:write'])
})

t.test('a 403 is not a failed authentication: it never brings on the failed-auth limit', async (t) => {
  const app = await buildTestApp(t, { RATE_LIMIT_FAILED_AUTH: 2 })
  const { token } = await issueManagedToken(app.app.apiTokens, { name: 'reader', roles: ['plants:read'] })
  for (let i = 0; i < 5; i++) assertForbidden(t, await call(app, 'createPlant', token, '203.0.113.9'), 'plants:write')
  t.equal((await call(app, 'listPlants', token, '203.0.113.9')).statusCode, 200, 'the address is not refused for it')
})

t.test('the 403 is decided before the body is read: an upload is never invited', async (t) => {
  const app = await buildTestApp(t)
  const { token } = await issueManagedToken(app.app.apiTokens, { name: 'reader', roles: ['plants:read'] })
  const address = await app.app.listen({ port: 0, host: '127.0.0.1' })
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(address).port), '127.0.0.1', () => {
      socket.write(`POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 1000\r\nExpect: 100-continue\r\n\r\n')
    })
    let received = ''
    socket.on('data', (chunk: Buffer) => { received += chunk.toString() })
    socket.on('close', () => resolve(received))
    socket.on('error', reject)
  })
  t.notMatch(answer, /100 Continue/, 'no 100 Continue')
  t.match(answer, /^HTTP\/1\.1 403 /, 'a 403 at once, without the body')
  t.match(answer, /connection: close/i, 'and the connection closed, so the body is never read')
})
