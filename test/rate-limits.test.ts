import type { InjectOptions } from 'fastify'
import t from 'tap'
import { buildTestApp, otherTestToken, testToken } from './support/helper.js'
import { readStoredIds } from './support/stored-plants.js'

// What each rate limit counts, and whom it refuses: failed authentications and requests to
// protected operations per credential, requests to public operations per client address.
// inject's remoteAddress is the client address the service sees.

function createFrom (remoteAddress: string, authorization: string | undefined, id: number): InjectOptions {
  return {
    method: 'POST',
    url: '/plants',
    remoteAddress,
    headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
    payload: JSON.stringify({ id, name: 'Fern' }),
  }
}

function getFrom (remoteAddress: string, url: string, authorization?: string): InjectOptions {
  return { method: 'GET', url, remoteAddress, headers: authorization === undefined ? {} : { authorization } }
}

const guesser = '203.0.113.66'

t.test('a guessing loop from one address is stopped after RATE_LIMIT_FAILED_AUTH failures, valid token or not', async (t) => {
  const { send, databaseFile } = await buildTestApp(t, { RATE_LIMIT_FAILED_AUTH: 5 })
  // Every kind of refused credentials counts: an unknown token, none, and a malformed header.
  const failures: Array<[string | undefined, number]> = [
    ['Bearer guess-1', 40102], ['Bearer guess-2', 40102], [undefined, 40101], ['Bearer', 40006], ['Bearer guess-3', 40102],
  ]
  for (const [index, [authorization, error]] of failures.entries()) {
    const answer = await send(createFrom(guesser, authorization, index))
    t.equal((answer.body as { error: number }).error, error, `failure ${index + 1} is refused as such`)
  }
  const stopped = await send(createFrom(guesser, 'Bearer guess-4', 100))
  t.equal(stopped.statusCode, 429, 'the next guess gets a 429')
  t.equal((stopped.body as { error: number }).error, 42903)
  const rightGuess = await send(createFrom(guesser, `Bearer ${testToken}`, 101))
  t.equal(rightGuess.statusCode, 429, 'so does the right token: the loop cannot tell it was right')
  t.equal((rightGuess.body as { error: number }).error, 42903)
  t.equal((await send(getFrom(guesser, '/plants/1', `Bearer ${testToken}`))).statusCode, 429, 'on every protected operation')

  t.equal((await send(createFrom('203.0.113.1', `Bearer ${testToken}`, 1))).statusCode, 200, 'another address with a valid token is served')
  const otherGuesser = await send(createFrom('203.0.113.2', 'Bearer guess-5', 2))
  t.equal(otherGuesser.statusCode, 401, 'another address with a bad token gets its 401')
  t.equal((await send(getFrom(guesser, '/openapi.json'))).statusCode, 200, 'the public operations still serve the guesser')
  t.same(readStoredIds(databaseFile), [1n], 'only the create of the other address is stored')
})

t.test('requests refused by another limit are not failed authentications', async (t) => {
  const { send } = await buildTestApp(t, { RATE_LIMIT_FAILED_AUTH: 2, RATE_LIMIT_PER_CREDENTIAL: 1 })
  const address = '203.0.113.9'
  t.equal((await send(getFrom(address, '/plants/1', `Bearer ${testToken}`))).statusCode, 404)
  for (let i = 0; i < 5; i++) {
    t.equal((await send(getFrom(address, '/plants/1', `Bearer ${testToken}`))).statusCode, 429, `over the credential's limit, ${i + 1}`)
  }
  t.equal((await send(getFrom(address, '/plants/1', `Bearer ${otherTestToken}`))).statusCode, 404,
    'the address has failed no authentication: its other token is served')
})

t.test('the per-credential limit counts each token on its own, from any address', async (t) => {
  const { send, databaseFile } = await buildTestApp(t, { RATE_LIMIT_PER_CREDENTIAL: 3 })
  for (let id = 1; id <= 3; id++) {
    t.equal((await send(createFrom('203.0.113.1', `Bearer ${testToken}`, id))).statusCode, 200, `request ${id} of 3`)
  }
  const refused = await send(createFrom('203.0.113.1', `Bearer ${testToken}`, 4))
  t.equal(refused.statusCode, 429)
  t.equal((refused.body as { error: number }).error, 42901)
  t.equal((await send(createFrom('203.0.113.2', `Bearer ${testToken}`, 5))).statusCode, 429, 'from another address too')
  t.equal((await send(getFrom('203.0.113.2', '/plants/1', `Bearer ${testToken}`))).statusCode, 429, 'on every protected operation')
  t.equal((await send(createFrom('203.0.113.1', `Bearer ${otherTestToken}`, 6))).statusCode, 200, 'another token is counted apart')
  t.equal((await send(createFrom('203.0.113.1', `bearer   ${testToken}`, 7))).statusCode, 429,
    'another spelling of the header is the same credential')
  t.same(readStoredIds(databaseFile), [1n, 2n, 3n, 6n])
})

t.test('public operations are limited per address, all of them together; /healthz and /readyz never', async (t) => {
  const { send } = await buildTestApp(t, { RATE_LIMIT_PER_ADDRESS: 2 })
  const address = '198.51.100.7'
  t.equal((await send(getFrom(address, '/openapi.json'))).statusCode, 200)
  t.equal((await send(getFrom(address, '/openapi.yaml'))).statusCode, 200)
  for (const url of ['/openapi.json', '/openapi.yaml', '/', '/docs', '/docs/swagger-ui.css']) {
    const refused = await send(getFrom(address, url))
    t.equal(refused.statusCode, 429, `${url} is refused`)
    t.equal((refused.body as { error: number }).error, 42902)
  }
  for (let i = 0; i < 20; i++) {
    const statuses = [(await send(getFrom(address, '/healthz'))).statusCode, (await send(getFrom(address, '/readyz'))).statusCode]
    if (statuses.some((status) => status !== 200)) t.fail(`probe ${i + 1}: ${statuses.join(', ')}`)
  }
  t.pass('20 rounds of probes all answered 200')
  t.equal((await send(getFrom(address, '/plants/1', `Bearer ${testToken}`))).statusCode, 404, 'protected operations are not counted by address')
  t.equal((await send(getFrom(address, '/no-such-path'))).statusCode, 404, 'an undeclared path is a 404, not a 429')
  t.equal((await send({ method: 'DELETE', url: '/openapi.json', remoteAddress: address })).statusCode, 405, 'an undeclared method a 405')
  t.equal((await send(getFrom('198.51.100.8', '/openapi.json'))).statusCode, 200, 'another address is served')
})

t.test('IPv6 clients are counted by their /64', async (t) => {
  const { send } = await buildTestApp(t, { RATE_LIMIT_PER_ADDRESS: 2 })
  t.equal((await send(getFrom('2001:db8:0:1::1', '/openapi.json'))).statusCode, 200)
  t.equal((await send(getFrom('2001:db8:0:1::2', '/openapi.json'))).statusCode, 200)
  t.equal((await send(getFrom('2001:db8:0:1:ffff:ffff:ffff:9', '/openapi.json'))).statusCode, 429, 'a third address of the same /64')
  t.equal((await send(getFrom('2001:db8:0:2::1', '/openapi.json'))).statusCode, 200, 'the next /64 is another client')
  t.equal((await send(getFrom('::ffff:192.0.2.1', '/openapi.json'))).statusCode, 200, 'IPv4 clients of a dual-stack socket are not one /64')
  t.equal((await send(getFrom('::ffff:192.0.2.2', '/openapi.json'))).statusCode, 200)
  t.equal((await send(getFrom('::ffff:192.0.2.3', '/openapi.json'))).statusCode, 200)
})

t.test('each limit counts a bounded number of addresses in a window; the rest share one count', async (t) => {
  const { send } = await buildTestApp(t, { RATE_LIMIT_PER_ADDRESS: 2 }, { rateLimitTuning: { keysPerWindow: 3 } })
  const served = async (address: string): Promise<number> => (await send(getFrom(address, '/openapi.yaml'))).statusCode
  t.same([await served('192.0.2.1'), await served('192.0.2.2'), await served('192.0.2.3')], [200, 200, 200], 'three addresses counted apart')
  t.same([await served('192.0.2.4'), await served('192.0.2.5')], [200, 200], 'the next two share one count')
  t.equal(await served('192.0.2.6'), 429, 'which is now used up, for any new address')
  t.equal(await served('192.0.2.1'), 200, 'the addresses counted apart keep their own count')
})
