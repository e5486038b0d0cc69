import { Agent, request } from 'node:http'
import t from 'tap'
import { issueManagedToken } from '../src/auth/managed-token.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { startServer } from './support/running-server.js'
import { signingKey, signJwt, testAudience, testIssuer, writeJwksFile } from './support/jwt-keys.js'
import { testFolder } from './support/test-folder.js'

// The built service, as operators run it: what its log says of each caller, and a revocation
// reaching a client that keeps its connection open.

const apiToken = 'credentials-test-token-0123456789'

t.test('the log names who each request authenticated as, and never holds a token or a JWT', async (t) => {
  const folder = testFolder(t)
  const key = await signingKey('key-1')
  const server = await startServer(t, {
    DATABASE_URL: `sqlite:${folder}/plants.db`,
    API_TOKENS: apiToken,
    JWT_ISSUER: testIssuer,
    JWT_AUDIENCE: testAudience,
    JWT_JWKS_FILE: writeJwksFile(folder, [key]),
  })
  const store = await SqlitePlantStore.open({ filename: `${folder}/plants.db` })
  t.teardown(() => store.close())
  const managed = await issueManagedToken(store.apiTokens, { name: 'ci-runner' })
  const jwt = await signJwt(key, { sub: 'alice@example.test' })
  const expiredJwt = await signJwt(key, { expiresIn: -300 })
  const sent = [apiToken, managed.token, jwt, expiredJwt, `${managed.token.slice(0, -2)}zz`, 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.']

  let id = 1
  for (const token of sent) {
    await fetch(`${server.baseUrl}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: id++, name: 'Fern' }),
    })
  }
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)

  const output = server.output()
  const lines = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { req?: { identity?: string } })
  const identities = lines.map((line) => line.req?.identity).filter((identity) => identity !== undefined)
  t.same(identities, ['api-token:1', 'token:ci-runner', 'jwt:alice@example.test'], 'each accepted caller, by name, and no refused one')
  for (const token of sent) {
    for (const part of token.split('.').filter((segment) => segment.length >= 8)) {
      t.notOk(output.includes(part), `no part of a sent token is logged (${part.slice(0, 6)}…)`)
    }
  }
})

t.test('a client on a kept-alive connection is refused within TOKEN_CACHE_TTL of its token\'s revocation', async (t) => {
  const folder = testFolder(t)
  const server = await startServer(t, { DATABASE_URL: `sqlite:${folder}/plants.db`, TOKEN_CACHE_TTL: '1' })
  const store = await SqlitePlantStore.open({ filename: `${folder}/plants.db` })
  t.teardown(() => store.close())
  const { token } = await issueManagedToken(store.apiTokens, { name: 'kept-alive' })
  // One socket, kept open: every request after the first reaches the connection's cache.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  // The connections that carried an accepted request (a refusal closes its connection).
  const acceptedOn = new Set<object>()
  let id = 100
  const status = async (): Promise<number> => new Promise((resolve, reject) => {
    const outgoing = request(`${server.baseUrl}/plants`, {
      agent,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    }, (response) => {
      response.resume()
      response.on('end', () => {
        if (response.statusCode === 200) acceptedOn.add(outgoing.socket as object)
        resolve(response.statusCode ?? 0)
      })
    })
    outgoing.on('error', reject)
    outgoing.end(JSON.stringify({ id: id++, name: 'Fern' }))
  })
  t.same([await status(), await status(), await status()], [200, 200, 200])

  await store.apiTokens.revoke('kept-alive', new Date())
  const revokedAt = Date.now()
  const bound = revokedAt + 1000
  // By when each request was sent: no request sent after the bound (with 100 ms for a lookup in
  // flight at the revocation) may be accepted, however long answers take on a loaded machine.
  const answers: Array<{ sentAt: number, status: number }> = []
  // Until a few requests were sent after the bound, however slow the machine.
  while (answers.filter(({ sentAt }) => sentAt > bound + 100).length < 3 && Date.now() < bound + 20_000) {
    const sentAt = Date.now()
    answers.push({ sentAt, status: await status() })
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const lastAccepted = Math.max(...answers.filter((answer) => answer.status === 200).map(({ sentAt }) => sentAt - revokedAt))
  t.comment(`last request accepted was sent ${lastAccepted} ms after the revocation (bound 1000 ms)`)
  const afterBound = answers.filter(({ sentAt }) => sentAt > bound + 100)
  t.ok(afterBound.length >= 3, 'requests were sent after the bound')
  t.same(afterBound.filter((answer) => answer.status !== 401), [], 'every request sent after the bound is refused')
  t.equal(acceptedOn.size, 1, 'every accepted request went over one connection, from its cache')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})
