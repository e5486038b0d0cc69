import { once } from 'node:events'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { buildTestApp } from './support/helper.js'
import { postgresSkipReason, postgresTestDatabase } from './support/test-databases.js'

// DATABASE_FAILOVER_WAIT: while a proxy in front of PostgreSQL (HAProxy before a Patroni cluster)
// has no primary to pass connections to, a request waits for one, up to the setting, and is
// answered as if nothing had happened once one is back; past the setting, or with 0, it gets its
// 503. The proxy here is a TCP one of the test's own on 127.0.0.1, in front of the test database.

interface Proxy {
  readonly url: string
  // Passes connections to PostgreSQL; or, as a proxy with no server behind it does, closes each
  // one as it comes, having closed every connection it passed on (HAProxy's shutdown-sessions).
  primary: 'up' | 'down'
}

async function proxyInFront (t: Test, databaseUrl: string): Promise<Proxy> {
  const target = new URL(databaseUrl)
  const passed = new Set<Socket>()
  const proxy: Proxy = { url: '', primary: 'up' }
  let primary: Proxy['primary'] = 'up'
  const server = createServer((client) => {
    if (primary === 'down') {
      client.destroy()
      return
    }
    const upstream = connect(Number(target.port || 5432), target.hostname)
    for (const socket of [client, upstream]) {
      passed.add(socket)
      socket.on('close', () => passed.delete(socket))
      socket.on('error', () => undefined)
    }
    client.pipe(upstream).pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    for (const socket of passed) socket.destroy()
    server.close()
  })
  const proxied = new URL(databaseUrl)
  proxied.hostname = '127.0.0.1'
  proxied.port = String((server.address() as AddressInfo).port)
  return Object.defineProperties(proxy, {
    url: { value: proxied.toString() },
    primary: {
      get: () => primary,
      set: (value: Proxy['primary']) => {
        primary = value
        if (value === 'down') for (const socket of passed) socket.destroy()
      },
    },
  })
}

t.test('a create sent while no primary takes connections waits for one, and is acknowledged', { skip: postgresSkipReason }, async (t) => {
  const database = await postgresTestDatabase(t)
  const proxy = await proxyInFront(t, database.url)
  const app = await buildTestApp(t, { DATABASE_URL: proxy.url, DATABASE_FAILOVER_WAIT: 5 })
  t.equal((await app.createPlant({ id: 1, name: 'Fern' })).statusCode, 200)

  proxy.primary = 'down'
  // The pool sees its connections closed before the create is sent, as when HAProxy closes the
  // sessions of a primary it marked down some moments before.
  await sleep(100)
  const started = Date.now()
  const answer = app.createPlant({ id: 2, name: 'Monstera' })
  await sleep(1000)
  proxy.primary = 'up'
  const { statusCode, body } = await answer
  t.equal(statusCode, 200, 'acknowledged once a primary took it')
  t.same(body, { name: 'Monstera' })
  t.ok(Date.now() - started >= 1000, `it waited (${Date.now() - started} ms)`)
  t.same((await database.readStoredPlants()).map(({ id }) => id), [1n, 2n])
})

t.test('past DATABASE_FAILOVER_WAIT, and at once with 0, it is a 503', { skip: postgresSkipReason }, async (t) => {
  const database = await postgresTestDatabase(t)
  const proxy = await proxyInFront(t, database.url)
  for (const wait of [1, 0]) {
    const app = await buildTestApp(t, { DATABASE_URL: proxy.url, DATABASE_FAILOVER_WAIT: wait })
    proxy.primary = 'up'
    t.equal((await app.createPlant({ id: 10 + wait, name: 'Fern' })).statusCode, 200)
    proxy.primary = 'down'
    await sleep(100)
    const started = Date.now()
    const { statusCode, headers } = await app.createPlant({ id: 20 + wait, name: 'Fern' })
    const elapsed = Date.now() - started
    t.equal(statusCode, 503, `DATABASE_FAILOVER_WAIT=${wait}: a 503`)
    t.equal(headers['retry-after'], '1')
    if (wait === 0) t.ok(elapsed < 1000, `at once (${elapsed} ms)`)
    else t.ok(elapsed >= 750 && elapsed < 4000, `after waiting about ${wait} s (${elapsed} ms)`)
  }
  t.same((await database.readStoredPlants()).map(({ id }) => id), [10n, 11n], 'and nothing of the refused creates is stored')
})
