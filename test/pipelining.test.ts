import { once } from 'node:events'
import type { IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { ConnectionGuard, type ConnectionLimits } from '../src/http/connection-guard.js'
import { checkAgainstSpec, createHeaders, parseResponses, request, startListening } from './support/raw-http.js'
import { readStoredIds } from './support/stored-plants.js'

// HTTP/1.1 pipelining (src/http/connection-guard.ts): a client may send many requests in one
// write; it gets every answer, in order, while the service reads no further than its answers are
// written. These tests run on a real socket, and fail if a Node release changes what the guard
// relies on: that pausing a socket stops Node's parser from reading it, and that Node's close()
// leaves idle connections to closeIdleConnections().

const withCloseOnLast = (index: number, count: number): Record<string, string> =>
  index === count - 1 ? { Connection: 'close' } : {}

t.test('fifty creates pipelined in one write are each answered, in order, and stored', async (t) => {
  const { open, databaseFile } = await startListening(t)
  const client = open()
  const count = 50
  client.write(Array.from({ length: count }, (_, index) => {
    const body = JSON.stringify({ id: index + 1, name: `Fern ${index + 1}` })
    return request('POST', '/plants', createHeaders({
      'Content-Length': String(body.length), 'X-Request-Id': `create-${index}`, ...withCloseOnLast(index, count),
    }), body)
  }).join(''))
  const responses = await client.received()
  t.same(responses.map((response) => response.headers['x-request-id']), Array.from({ length: count }, (_, index) => `create-${index}`))
  responses.forEach((response, index) => {
    t.match(checkAgainstSpec(t, 'POST', '/plants', response), { name: `Fern ${index + 1}` })
  })
  t.same(readStoredIds(databaseFile), Array.from({ length: count }, (_, index) => BigInt(index + 1)))
})

t.test('requests refused before the app reads them, pipelined with others, are each answered, and the connection stays open', async (t) => {
  const { open, databaseFile } = await startListening(t)
  const client = open()
  const plant = JSON.stringify({ id: 7, name: 'Fern' })
  const sent: Array<[string, string, Record<string, string>, string]> = [
    ['GET', '/plants/7', { Host: 'plants.test' }, ''],
    ['POST', '/plants', { Host: 'plants.test', 'Content-Type': 'application/json', 'Content-Length': String(plant.length) }, plant],
    ['GET', '/no-such-path', { Host: 'plants.test' }, ''],
    ['POST', '/plants', createHeaders({ 'Content-Length': String(plant.length) }), plant],
    // A read behind a create sees it (test/pipelined-order.test.ts).
    ['GET', '/plants/7', createHeaders({ Connection: 'close' }), ''],
  ]
  client.write(sent.map(([method, path, headers, body]) => request(method, path, headers, body)).join(''))
  const responses = await client.received()
  t.same(responses.map((response) => response.statusCode), [401, 401, 404, 200, 200], 'every request answered, in order')
  t.same(responses.slice(0, -1).map((response) => response.headers.connection), ['keep-alive', 'keep-alive', 'keep-alive', 'keep-alive'],
    'a refusal of a request received in full keeps the connection for those behind it')
  responses.forEach((response, index) => {
    const [method, path] = sent[index] ?? []
    checkAgainstSpec(t, method ?? '', path ?? '', response)
  })
  t.same(readStoredIds(databaseFile), [7n])
})

t.test('bodies refused as they are parsed, received in full and pipelined with others, are each answered, and the connection stays open', async (t) => {
  const { open } = await startListening(t)
  const client = open()
  const body = (text: string, extra: Record<string, string> = {}): [string, Record<string, string>, string] =>
    ['/plants', createHeaders({ 'Content-Length': String(text.length), ...extra }), text]
  const sent = [
    body('{"id": 1,'),
    body('{"id":1,"id":2,"name":"Fern"}'),
    body('{"id":1,"name":"Fern"}', { 'Content-Type': 'application/json; charset=iso-8859-1' }),
    body('{"id":1,"name":"Fern"}', { 'Content-Encoding': 'gzip' }),
  ]
  client.write([
    ...sent.map(([path, headers, text]) => request('POST', path, headers, text)),
    request('GET', '/healthz', { Host: 'plants.test', Connection: 'close' }),
  ].join(''))
  const responses = await client.received()
  t.same(responses.map((response) => response.statusCode), [400, 400, 415, 415, 200], 'every request answered, in order')
  t.same(responses.slice(0, -1).map((response) => response.headers.connection), ['keep-alive', 'keep-alive', 'keep-alive', 'keep-alive'],
    'a body refused by its parser, received in full, keeps the connection for those behind it')
  responses.slice(0, -1).forEach((response) => { checkAgainstSpec(t, 'POST', '/plants', response) })
})

t.test('many clients pipelining fifty creates each at once are all answered, none cut', async (t) => {
  const { open, databaseFile } = await startListening(t)
  const clients = 16
  const count = 50
  const received = Array.from({ length: clients }, (_, client) => {
    const socket = open()
    socket.write(Array.from({ length: count }, (_, index) => {
      const id = client * count + index + 1
      const plant = JSON.stringify({ id, name: `Fern ${id}` })
      return request('POST', '/plants', createHeaders({ 'Content-Length': String(plant.length), ...withCloseOnLast(index, count) }), plant)
    }).join(''))
    return socket.received(15_000)
  })
  const answered = await Promise.all(received)
  t.same(answered.map((responses) => responses.filter((response) => response.statusCode === 200).length), Array(clients).fill(count),
    'every client got all fifty answers')
  answered.forEach((responses, client) => {
    t.same(responses.map((response) => (checkAgainstSpec(t, 'POST', '/plants', response) as { name: string }).name),
      Array.from({ length: count }, (_, index) => `Fern ${client * count + index + 1}`), `client ${client}'s answers in order, each as the spec declares`)
  })
  t.equal(readStoredIds(databaseFile).length, clients * count)
})

t.test('three thousand requests pipelined in one write, several reads long, are all answered in order', async (t) => {
  const { open } = await startListening(t)
  const client = open()
  const count = 3000
  client.write(Array.from({ length: count }, (_, index) =>
    request('GET', '/healthz', { Host: 'plants.test', 'X-Request-Id': `health-${index}`, ...withCloseOnLast(index, count) })).join(''))
  const responses = await client.received(20_000)
  t.equal(responses.length, count)
  t.ok(responses.every((response, index) => response.statusCode === 200 && response.headers['x-request-id'] === `health-${index}`),
    'every answer is a 200, in the order asked')
})

// The guard on a bare Fastify app, whose limits a test may set.
async function guardedApp (t: Test, limits: Partial<ConnectionLimits> = {}): Promise<{ guard: ConnectionGuard, app: FastifyInstance, port: number }> {
  const guard: ConnectionGuard = new ConnectionGuard({
    maxConnections: 100, maxUnansweredRequests: 16, maxWaitingRequests: 4096, inactiveConnectionMs: 30_000, shutdownIdleGraceMs: 1000, ...limits,
  }, () => app.log)
  const app: FastifyInstance = Fastify({ serverFactory: guard.serverFactory, forceCloseConnections: false, return503OnClosing: false })
  // A kibibyte an answer, so that a client that does not read fills the socket's buffers soon.
  const body = 'hello '.repeat(170)
  app.get('/hello', async (request, reply) => reply.header('x-request-id', request.headers['x-request-id']).send(body))
  // 100 KiB an answer: a client that does not read fills the sockets' buffers within a read's requests.
  const big = 'x'.repeat(100 * 1024)
  app.get('/big', async (_request, reply) => reply.send(big))
  // Answered after a while, so that a test can close the app with requests still in flight.
  app.get('/slow', async (request, reply) => {
    await new Promise((resolve) => setTimeout(resolve, 10))
    return reply.header('x-request-id', request.headers['x-request-id']).send('slow')
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await app.close() })
  const address = app.server.address()
  return { guard, app, port: typeof address === 'object' && address !== null ? address.port : 0 }
}

function helloRequests (count: number): string {
  return Array.from({ length: count }, (_, index) =>
    `GET /hello HTTP/1.1\r\nHost: a\r\nX-Request-Id: hello-${index}\r\n${index === count - 1 ? 'Connection: close\r\n' : ''}\r\n`).join('')
}

async function openSocket (t: Test, port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  await once(socket, 'connect')
  return socket
}

async function readAll (socket: Socket): Promise<string> {
  let raw = ''
  socket.on('data', (chunk: Buffer) => { raw += chunk.toString('latin1') })
  await once(socket, 'close')
  return raw
}

t.test('a client that stops reading is read no further than one read past its limit, and gets every answer once it reads', async (t) => {
  const { guard, port } = await guardedApp(t)
  const socket = await openSocket(t, port)
  socket.pause()
  const count = 20_000
  socket.write(helloRequests(count))
  let mostWaiting = 0
  const watch = setInterval(() => { mostWaiting = Math.max(mostWaiting, guard.waitingRequests) }, 1)
  t.teardown(() => { clearInterval(watch) })
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.ok(guard.waitingRequests > 0, `requests wait while the client does not read (${guard.waitingRequests})`)
  const answers = readAll(socket)
  socket.resume()
  const responses = parseResponses(await answers)
  clearInterval(watch)
  // A read is at most 64 KiB: some 1,300 of these requests.
  t.ok(mostWaiting <= 1500, `at most one read's requests waited at once (${mostWaiting})`)
  t.equal(responses.length, count)
  t.ok(responses.every((response, index) => response.statusCode === 200 && response.headers['x-request-id'] === `hello-${index}`),
    'every answer is a 200, in the order asked')
  t.equal(guard.waitingRequests, 0)
})

t.test('sixteen connections with requests waiting at once, well within the requests allowed to wait, are all served', async (t) => {
  const { guard, port } = await guardedApp(t, { maxWaitingRequests: 1000 })
  const sockets = await Promise.all(Array.from({ length: 16 }, async () => openSocket(t, port)))
  const slowRequests = Array.from({ length: 50 }, (_, index) =>
    `GET /slow HTTP/1.1\r\nHost: a\r\n${index === 49 ? 'Connection: close\r\n' : ''}\r\n`).join('')
  const answers = sockets.map(async (socket) => readAll(socket))
  let mostWaiting = 0
  const watch = setInterval(() => { mostWaiting = Math.max(mostWaiting, guard.waitingRequests) }, 1)
  for (const socket of sockets) socket.write(slowRequests)
  const responses = (await Promise.all(answers)).map(parseResponses)
  clearInterval(watch)
  t.ok(mostWaiting > 4 * 34, `more connections waited at once than the four allowed before (${mostWaiting} requests waiting)`)
  t.same(responses.map((answered) => answered.length), Array(16).fill(50), 'every connection got all fifty answers')
})

t.test('a connection whose requests would begin to wait beyond the requests allowed to wait is closed at once; the others are served', async (t) => {
  const { guard, app, port } = await guardedApp(t, { maxWaitingRequests: 1 })
  const holding = await openSocket(t, port)
  holding.pause()
  holding.write(helloRequests(5000))
  while (guard.waitingRequests === 0) await new Promise((resolve) => setTimeout(resolve, 10))

  const flooding = await openSocket(t, port)
  flooding.on('error', () => undefined)
  let floodingRequestsRead = 0
  app.server.on('request', (request: IncomingMessage) => {
    if (request.socket.remotePort === flooding.localPort) floodingRequestsRead += 1
  })
  flooding.write(helloRequests(5000))
  // Read (and let go), so as to see the close: a reset where the service had requests of it
  // unread (Node 24), an end otherwise.
  flooding.resume()
  await new Promise((resolve) => flooding.once('close', resolve))
  // Node's parser is stopped at the request that would wait, not after the whole read.
  t.ok(floodingRequestsRead <= 16, `no more of its requests were read than it may have answered at once (${floodingRequestsRead})`)

  const within = await openSocket(t, port)
  within.write(helloRequests(16))
  t.equal(parseResponses(await readAll(within)).length, 16, 'a client pipelining within its limit gets every answer')
  const answers = readAll(holding)
  holding.resume()
  const responses = parseResponses(await answers)
  t.equal(responses.length, 5000, 'the connection whose requests waited gets every answer')
})

t.test('closing answers a request sent on an idle keep-alive connection, with Connection: close, instead of resetting it', async (t) => {
  const { app, port } = await guardedApp(t, { shutdownIdleGraceMs: 500 })
  const socket = await openSocket(t, port)
  const answers = readAll(socket)
  socket.write('GET /hello HTTP/1.1\r\nHost: a\r\n\r\n')
  await new Promise((resolve) => setTimeout(resolve, 100))
  const closed = app.close()
  socket.write('GET /hello HTTP/1.1\r\nHost: a\r\n\r\n')
  const responses = parseResponses(await answers)
  await closed
  t.same(responses.map((response) => response.statusCode), [200, 200])
  t.equal(responses[1]?.headers.connection, 'close')
})

t.test('closing with pipelined requests waiting answers every one, and only the last says Connection: close', async (t) => {
  const { app, port } = await guardedApp(t, { shutdownIdleGraceMs: 200 })
  const socket = await openSocket(t, port)
  const count = 100
  const answers = readAll(socket)
  let closed: Promise<void> | undefined
  socket.once('data', () => { closed = app.close() })
  socket.write(Array.from({ length: count }, (_, index) => `GET /slow HTTP/1.1\r\nHost: a\r\nX-Request-Id: slow-${index}\r\n\r\n`).join(''))
  const responses = parseResponses(await answers)
  await closed
  t.same(responses.map((response) => response.headers['x-request-id']), Array.from({ length: count }, (_, index) => `slow-${index}`),
    'every request answered, in order')
  t.same(responses.filter((response) => response.headers.connection === 'close').map((response) => response.headers['x-request-id']), [`slow-${count - 1}`],
    'the last answer, and only it, closes the connection')
})

t.test('a connection whose client reads none of its answers for inactiveConnectionMs is closed by Node, and its place goes to another', async (t) => {
  const { guard, port } = await guardedApp(t, { maxWaitingRequests: 1, inactiveConnectionMs: 300 })
  const stalled = await openSocket(t, port)
  stalled.on('error', () => undefined)
  stalled.pause()
  const stalledClosed = new Promise((resolve) => stalled.once('close', resolve))
  // 200 MB of answers asked for: the sockets' buffers fill within the first read's requests,
  // and the rest of them wait.
  stalled.write('GET /big HTTP/1.1\r\nHost: a\r\n\r\n'.repeat(2000))
  while (guard.waitingRequests === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  const started = Date.now()
  while (guard.waitingRequests > 0 && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(guard.waitingRequests, 0, `its waiting requests went with it, ${Date.now() - started} ms after they began to wait`)
  // Read, so as to see the close.
  stalled.resume()
  await stalledClosed

  const reading = await openSocket(t, port)
  reading.write(helloRequests(5000))
  t.equal(parseResponses(await readAll(reading)).length, 5000, 'a client pipelining beyond its limit since is served, not cut')
})
