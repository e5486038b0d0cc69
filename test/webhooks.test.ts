import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { buildTestApp } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'
import { startWebhookReceiver } from './support/webhook-receiver.js'
import { asManager, asManagerWithJson, registerEndpoint, verifiedDelivery, webhookTestSettings } from './support/webhooks.js'

// Webhooks from openapi.yaml's `webhooks`: sent for what a create or delete commits and for
// nothing else, signed as Standard Webhooks v1 (checked with the standardwebhooks package), with
// the body the spec declares, to the endpoints registered through the API.

testOnEveryBackend(t, 'a new plant and a deleted one are sent, signed, with the bodies the spec declares; nothing else is', async (t, database) => {
  const app = await buildTestApp(t, { DATABASE_URL: database.url, ...webhookTestSettings })
  const receiver = await startWebhookReceiver(t)
  const everything = await registerEndpoint(t, app, `${receiver.url}/all`)
  const deletesOnly = await registerEndpoint(t, app, `${receiver.url}/deletes`, ['plantDeleted'])

  t.equal((await app.createPlant('{"id":9007199254740993,"name":"Aloe","tag":"succulent"}')).statusCode, 200)
  t.equal((await app.createPlant('{"id":9007199254740993,"name":"Aloe","tag":"succulent"}')).statusCode, 200, 'a replay')
  t.equal((await app.createPlant('{"id":9007199254740993,"name":"Other"}')).statusCode, 409, 'a conflict')
  t.equal((await app.createPlant('{"id":1}')).statusCode, 400, 'a refusal')
  t.equal((await app.send({ method: 'DELETE', url: '/plants/9007199254740993', headers: asManager })).statusCode, 204)
  t.equal((await app.send({ method: 'DELETE', url: '/plants/9007199254740993', headers: asManager })).statusCode, 404)

  await receiver.waitFor(3)
  await sleep(500)
  t.equal(receiver.received.length, 3, 'one create and one delete to the first endpoint, the delete to the second: nothing more')
  const toAll = receiver.received.filter(({ path }) => path === '/all')
  const created = verifiedDelivery(t, toAll.find(({ body }) => body.includes('"newPlant"'))!, everything.secret)
  t.equal(toAll.find(({ body }) => body.includes('"newPlant"'))!.body.includes('"id":9007199254740993'), true, 'the id is exact beyond 2^53')
  t.same([created.type, created.data.name, created.data.tag], ['newPlant', 'Aloe', 'succulent'])
  t.match(toAll.find(({ body }) => body.includes('"newPlant"'))!.body, /"data":\{"id":9007199254740993,"name":"Aloe","tag":"succulent"\}\}$/,
    'data is the stored plant with its id')
  const deleted = verifiedDelivery(t, toAll.find(({ body }) => body.includes('"plantDeleted"'))!, everything.secret)
  t.same([deleted.type, deleted.data.name], ['plantDeleted', 'Aloe'], 'the deleted plant as it was stored')
  const toDeletes = receiver.received.filter(({ path }) => path === '/deletes')
  t.equal(toDeletes.length, 1)
  t.equal(verifiedDelivery(t, toDeletes[0]!, deletesOnly.secret).type, 'plantDeleted')
  t.equal(toDeletes[0]!.headers['webhook-id'], toAll.find(({ body }) => body.includes('"plantDeleted"'))!.headers['webhook-id'],
    'one message: the same webhook-id to every endpoint')
  t.ok(Math.abs(Date.parse(created.timestamp) - Date.now()) < 10_000, 'the timestamp is the commit\'s')
})

testOnEveryBackend(t, 'an update that changes a plant sends plantUpdated with the plant as stored; one that changes nothing, or is refused, sends nothing', async (t, database) => {
  const app = await buildTestApp(t, { DATABASE_URL: database.url, ...webhookTestSettings })
  const receiver = await startWebhookReceiver(t)
  const updatesOnly = await registerEndpoint(t, app, `${receiver.url}/updates`, ['plantUpdated'])
  const put = async (id: string, payload: string, headers: Record<string, string> = {}): Promise<number> =>
    (await app.send({ method: 'PUT', url: `/plants/${id}`, headers: { ...asManagerWithJson, ...headers }, payload })).statusCode

  t.equal((await app.createPlant('{"id":9007199254740993,"name":"Aloe"}')).statusCode, 200)
  t.equal(await put('9007199254740993', '{"name":"Aloe","tag":"succulent"}'), 200, 'a change')
  t.equal(await put('9007199254740993', '{"tag":"succulent","name":"Aloe"}'), 200, 'the same plant again')
  t.equal(await put('9007199254740993', '{"name":"Aloe"}', { 'if-match': '"stale-tag-000000000000000"' }), 412, 'a stale If-Match')
  t.equal(await put('5', '{"name":"Aloe"}'), 404, 'no such plant')
  t.equal(await put('9007199254740993', '{"tag":"no name"}'), 400, 'a refusal')

  await receiver.waitFor(1)
  await sleep(500)
  t.equal(receiver.received.length, 1, 'one message, for the one change: nothing more')
  const updated = verifiedDelivery(t, receiver.received[0]!, updatesOnly.secret)
  t.same([updated.type, updated.data.name, updated.data.tag], ['plantUpdated', 'Aloe', 'succulent'])
  t.match(receiver.received[0]!.body, /"data":\{"id":9007199254740993,"name":"Aloe","tag":"succulent"\}\}$/, 'the plant as the update stored it, its id exact')
})

t.test('endpoints are listed with their state and never their secret; deleted; rotated', async (t) => {
  const app = await buildTestApp(t, webhookTestSettings)
  const receiver = await startWebhookReceiver(t)
  const endpoint = await registerEndpoint(t, app, `${receiver.url}/hook?x=1`)
  t.match(endpoint, { id: /^[0-9a-f-]{36}$/, url: `${receiver.url}/hook?x=1`, state: 'enabled', pendingMessages: 0, failedMessages: 0 })
  t.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  t.notOk('events' in endpoint, 'every event: no events listed')
  const listed = await app.send({ method: 'GET', url: '/webhook-endpoints', headers: asManager })
  t.equal(listed.statusCode, 200)
  t.equal((listed.body as unknown[]).length, 1)
  t.notOk(listed.response.body.includes(endpoint.secret) || listed.response.body.includes('secret'), 'no secret is listed')

  await app.createPlant({ id: 1, name: 'Before' })
  const [before] = await receiver.waitFor(1)
  verifiedDelivery(t, before!, endpoint.secret)

  // A UUID's hex digits are read whatever their case (RFC 9562).
  const rotated = await app.send({ method: 'POST', url: `/webhook-endpoints/${endpoint.id.toUpperCase()}/rotate-secret`, headers: asManager })
  t.equal(rotated.statusCode, 200, 'rotated by its id in capitals')
  const { secret, previousSecretExpiresAt } = rotated.body as { secret: string, previousSecretExpiresAt: string }
  t.not(secret, endpoint.secret)
  t.ok(Math.abs(Date.parse(previousSecretExpiresAt) - Date.now() - 86_400_000) < 60_000, 'the previous secret signs for 24 hours')
  await app.createPlant({ id: 2, name: 'After' })
  const [, after] = await receiver.waitFor(2)
  verifiedDelivery(t, after!, secret)
  verifiedDelivery(t, after!, endpoint.secret)
  t.equal(String(after!.headers['webhook-signature']).split(' ').length, 2, 'two signatures while both secrets sign')

  const deleted = await app.send({ method: 'DELETE', url: `/webhook-endpoints/${endpoint.id.toUpperCase()}`, headers: asManager })
  t.equal(deleted.statusCode, 204, 'deleted by its id in capitals')
  await app.createPlant({ id: 3, name: 'Unheard' })
  await sleep(400)
  t.equal(receiver.received.length, 2, 'nothing is sent to a deleted endpoint')
  const missing = '3f0b1c52-5d7e-4a8e-9b43-2f6e1a9c7d10'
  for (const [method, url] of [['DELETE', `/webhook-endpoints/${missing}`], ['POST', `/webhook-endpoints/${missing}/rotate-secret`]] as const) {
    const answer = await app.send({ method, url, headers: asManager })
    t.same([answer.statusCode, (answer.body as { error: number }).error], [404, 40401], `${method} ${url}: 404`)
  }
  const notUuid = await app.send({ method: 'DELETE', url: '/webhook-endpoints/abc', headers: asManager })
  t.equal(notUuid.statusCode, 400)
})

testOnEveryBackend(t, 'an endpoint is named by its id in any case, and in the urn:uuid: form format: uuid admits', async (t, database) => {
  const app = await buildTestApp(t, { DATABASE_URL: database.url, ...webhookTestSettings })
  const endpoint = await registerEndpoint(t, app, 'http://127.0.0.1:9/hook')
  for (const id of [endpoint.id.toUpperCase(), `urn:uuid:${endpoint.id}`, `URN:UUID:${endpoint.id.toUpperCase()}`]) {
    const rotated = await app.send({ method: 'POST', url: `/webhook-endpoints/${id}/rotate-secret`, headers: asManager })
    t.equal(rotated.statusCode, 200, `rotated as ${id}`)
  }
  const unknown = await app.send({ method: 'DELETE', url: '/webhook-endpoints/urn:uuid:3f0b1c52-5d7e-4a8e-9b43-2f6e1a9c7d10', headers: asManager })
  t.equal(unknown.statusCode, 404, 'an unknown id in the urn:uuid: form: 404')
  const deleted = await app.send({ method: 'DELETE', url: `/webhook-endpoints/urn:uuid:${endpoint.id}`, headers: asManager })
  t.equal(deleted.statusCode, 204, 'deleted as urn:uuid:')
  t.same((await app.send({ method: 'GET', url: '/webhook-endpoints', headers: asManager })).body, [])
})

t.test('an endpoint\'s URL and events are checked when it is registered, by what the URL itself shows: no name is resolved', async (t) => {
  const app = await buildTestApp(t, {}, {
    resolveHost: async (host) => { throw new Error(`${host} was resolved`) },
  })
  const cases: Array<[string, RegExp]> = [
    ['http://127.0.0.1:9/hook', /its host 127\.0\.0\.1 is a loopback address \(WEBHOOK_ALLOW_LOOPBACK=true allows loopback endpoints, over http:\/\/ too, for development\)/],
    ['https://127.0.0.1:9/hook', /loopback address/],
    ['https://[::1]/hook', /loopback address/],
    ['https://10.0.0.7/hook', /its host 10\.0\.0\.7 is a private address/],
    ['https://172.16.0.1/', /private address/],
    ['https://192.168.0.1/', /private address/],
    ['https://169.254.169.254/latest/meta-data', /link-local address/],
    ['https://100.64.0.1/', /shared \(CGNAT\) address/],
    ['https://224.0.0.1/', /multicast address/],
    ['https://[fd00::1]/', /unique-local address/],
    ['https://[fe80::1]/', /link-local address/],
    ['https://[::ffff:10.0.0.1]/', /private address/],
    ['https://[64:ff9b::a00:1]/', /private address/],
    ['https://0.0.0.0/', /not a public address/],
    ['https://user:pass@plants.example.com/', /credentials/],
    ['https://plants.example.com/#fragment', /fragment/],
    ['https://plants.example.com:0/', /port 0/],
    ['ftp://plants.example.com/', /https:\/\//],
    ['http://plants.example.com/', /https:\/\//],
    // A URI without `//` has no host (RFC 3986), though a WHATWG parser finds one.
    ['https:8.8.8.8/h', /https:\/\//],
    ['https:/8.8.8.8/h', /https:\/\//],
    ['https:///8.8.8.8/h', /https:\/\//],
    // Forms the pattern has no need of, which the policy alone would take.
    ['https://-edge-.example/', /must be https:\/\/ and a host name/],
    ['https://8.8.8.8./', /must be https:\/\/ and a host name/],
  ]
  for (const [url, reason] of cases) {
    const answer = await app.send({ method: 'POST', url: '/webhook-endpoints', headers: asManagerWithJson, payload: JSON.stringify({ url }) })
    t.equal(answer.statusCode, 400, `${url}: 400`)
    t.equal((answer.body as { error: number }).error, 40008)
    t.match((answer.body as { message: string }).message, reason)
  }
  const unknownEvent = await app.send({
    method: 'POST', url: '/webhook-endpoints', headers: asManagerWithJson, payload: JSON.stringify({ url: 'https://plants.example.com/', events: ['newPlant', 'plantWatered'] }),
  })
  t.same(unknownEvent.body, {
    error: 40009, message: `body.events names plantWatered, which is not a webhook of this service (${Object.keys(loadOpenApiDocument().document.webhooks ?? {}).join(', ')})`,
  })
  t.same((await app.send({ method: 'GET', url: '/webhook-endpoints', headers: asManager })).body, [], 'nothing refused was stored')

  // A name that does not resolve, or resolves to a private address, is not known to be one now:
  // it is registered, and each delivery finds out (the next test).
  for (const url of ['https://unknown.example/', 'https://plants.example.com:8443/hooks?from=plant-store', 'https://[2606:4700::1111]/hook', 'https://8.8.8.8/hook']) {
    const answer = await app.send({ method: 'POST', url: '/webhook-endpoints', headers: asManagerWithJson, payload: JSON.stringify({ url }) })
    t.equal(answer.statusCode, 201, `${url} is registered`)
    await app.send({ method: 'DELETE', url: `/webhook-endpoints/${(answer.body as { id: string }).id}`, headers: asManager })
  }
})

t.test('a delivery to a name that resolves to a private address, or to none, is refused before any connection, and lastFailure says why', async (t) => {
  const resolved: Record<string, string[]> = { 'internal.example': ['10.1.2.3'], 'mixed.example': ['93.184.216.34', '192.168.1.1'] }
  const app = await buildTestApp(t, { WEBHOOK_RETRY_SCHEDULE: '0,30' }, {
    resolveHost: async (host) => (resolved[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
  })
  const expected: Array<[string, RegExp]> = [
    ['https://internal.example/hook', /^refused: its host internal\.example resolves to 10\.1\.2\.3, which is a private address$/],
    ['https://mixed.example/hook', /^refused: its host mixed\.example resolves to 192\.168\.1\.1, which is a private address$/],
    ['https://unknown.example/hook', /^refused: its host unknown\.example cannot be resolved$/],
  ]
  const ids: string[] = []
  for (const [url] of expected) {
    const answer = await app.send({ method: 'POST', url: '/webhook-endpoints', headers: asManagerWithJson, payload: JSON.stringify({ url }) })
    t.equal(answer.statusCode, 201, `${url} is registered`)
    ids.push((answer.body as { id: string }).id)
  }
  t.equal((await app.createPlant('{"id":1,"name":"Fern"}')).statusCode, 200)
  type Listed = Array<{ id: string, lastFailure?: { reason: string } }>
  let endpoints: Listed = []
  for (let waited = 0; waited < 10_000 && !(endpoints.length === ids.length && endpoints.every(({ lastFailure }) => lastFailure !== undefined)); waited += 50) {
    await sleep(50)
    endpoints = (await app.send({ method: 'GET', url: '/webhook-endpoints', headers: asManager })).body as Listed
  }
  for (const [index, [url, reason]] of expected.entries()) {
    const endpoint = endpoints.find(({ id }) => id === ids[index])
    t.match(endpoint?.lastFailure?.reason, reason, `${url}: the delivery was refused, and the endpoint says why`)
  }
})

t.test('WEBHOOK_ALLOW_LOOPBACK=only allows loopback address literals and resolves no name', async (t) => {
  const app = await buildTestApp(t, { WEBHOOK_ALLOW_LOOPBACK: 'only' }, {
    resolveHost: async (host) => { throw new Error(`${host} was resolved`) },
  })
  for (const url of ['https://localhost/hook', 'https://plants.example.com/hook', 'https://10.0.0.7/hook']) {
    const answer = await app.send({ method: 'POST', url: '/webhook-endpoints', headers: asManagerWithJson, payload: JSON.stringify({ url }) })
    t.same([answer.statusCode, (answer.body as { error: number }).error], [400, 40008], `${url} is refused`)
    t.match((answer.body as { message: string }).message, /is not a loopback address, the only ones allowed here \(WEBHOOK_ALLOW_LOOPBACK=only\)/)
  }
  for (const url of ['http://127.0.0.1:9/hook', 'http://[::1]:9/hook', 'https://127.0.0.2:9/hook']) {
    const answer = await app.send({ method: 'POST', url: '/webhook-endpoints', headers: asManagerWithJson, payload: JSON.stringify({ url }) })
    t.equal(answer.statusCode, 201, `${url} is registered`)
  }
  for (const url of ['http:/127.0.0.1:9/hook', 'http:127.0.0.1:9/hook']) {
    const answer = await app.send({ method: 'POST', url: '/webhook-endpoints', headers: asManagerWithJson, payload: JSON.stringify({ url }) })
    t.same([answer.statusCode, (answer.body as { error: number }).error], [400, 40008], `${url}, with no //, is refused`)
  }
  for (const url of ['http://127.0.0.1:0/hook', 'http://[::1]:00/hook']) {
    const answer = await app.send({ method: 'POST', url: '/webhook-endpoints', headers: asManagerWithJson, payload: JSON.stringify({ url }) })
    t.same([answer.statusCode, (answer.body as { error: number }).error], [400, 40008], `${url}, at port 0, is refused`)
    t.match((answer.body as { message: string }).message, /port 0/)
  }
})

t.test('a connection goes to the address just checked: a name that now resolves to a private address is refused', async (t) => {
  const { EndpointUrlPolicy } = await import('../src/endpoint-urls/endpoint-url-policy.js')
  let answer = '93.184.216.34'
  const policy = new EndpointUrlPolicy('false', async () => [{ address: answer, family: 4 }])
  t.equal(policy.check('https://rebinding.example/hook').hostname, 'rebinding.example', 'registered without resolving it')
  answer = '192.168.1.20'
  const looked = await new Promise<{ error: Error | null, address: string }>((resolve) => {
    policy.lookup('rebinding.example', {}, (error, address) => resolve({ error, address: String(address) }))
  })
  t.match(looked.error?.message, /rebinding\.example resolves to 192\.168\.1\.20, which is a private address/, 'refused when the connection opens')
  answer = '93.184.216.34'
  const again = await new Promise<{ error: Error | null, address: string }>((resolve) => {
    policy.lookup('rebinding.example', {}, (error, address) => resolve({ error, address: String(address) }))
  })
  t.same(again, { error: null, address: '93.184.216.34' }, 'and the connection goes to the address checked')
})

t.test('a URL whose host a WHATWG parser finds where a URI has none is refused', async (t) => {
  const { EndpointUrlPolicy } = await import('../src/endpoint-urls/endpoint-url-policy.js')
  const policy = new EndpointUrlPolicy('false', async () => [{ address: '8.8.8.8', family: 4 }])
  for (const url of ['https:8.8.8.8/h', 'https:/8.8.8.8/h', 'https:///8.8.8.8/h', 'https://\\8.8.8.8/h', 'https:\\\\8.8.8.8/h', ' https://8.8.8.8/h']) {
    t.throws(() => policy.check(url), { message: /https:\/\// }, JSON.stringify(url))
  }
  t.equal(policy.check('https://8.8.8.8/h').hostname, '8.8.8.8', 'the host named after //')
})
