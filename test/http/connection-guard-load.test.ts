import type { IncomingMessage, ServerResponse } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { type Test, test } from 'tap'
import { ConnectionGuard } from '../../src/http/connection-guard.js'

// A guarded server whose app holds every response it is given, unanswered, for the test to answer.
async function startGuardedServer (t: Test): Promise<{ guard: ConnectionGuard, held: ServerResponse[], port: number }> {
  const guard = new ConnectionGuard({ maxConnections: 100, maxUnansweredRequests: 16, maxWaitingRequests: 4096, inactiveConnectionMs: 30_000, shutdownIdleGraceMs: 100 }, () => ({}) as FastifyBaseLogger)
  const held: ServerResponse[] = []
  const server = guard.serverFactory((_request: IncomingMessage, response: ServerResponse) => { held.push(response) }, {})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const { port } = server.address() as AddressInfo
  return { guard, held, port }
}

// The guard counts the requests its server answers and those waiting for an answer: what the
// webhooks' deliveries give way to (src/webhooks/delivery-pacer.ts).
test('the guard counts requests waiting for their answers, and those answered', async (t) => {
  const { guard, held, port } = await startGuardedServer(t)
  t.same([guard.requestLoad.waiting(), guard.requestLoad.answered()], [0, 0])

  const responses = [1, 2, 3].map(async () => fetch(`http://127.0.0.1:${port}/`))
  while (held.length < 3) await new Promise((resolve) => setTimeout(resolve, 5))
  t.same([guard.requestLoad.waiting(), guard.requestLoad.answered()], [3, 0], 'three handed to the app, none answered')

  held[0]!.end('one')
  held[1]!.end('two')
  await Promise.all((await Promise.all(responses.slice(0, 2))).map(async (response) => response.text()))
  t.same([guard.requestLoad.waiting(), guard.requestLoad.answered()], [1, 2])

  held[2]!.destroy()
  await responses[2]!.catch(() => undefined)
  while (guard.requestLoad.waiting() > 0) await new Promise((resolve) => setTimeout(resolve, 5))
  t.same([guard.requestLoad.waiting(), guard.requestLoad.answered()], [0, 3], 'a response closed unanswered no longer waits')
})

test('requests pipelined on a connection that closes before they are answered no longer wait', async (t) => {
  const { guard, held, port } = await startGuardedServer(t)
  const socket = connect(port, '127.0.0.1')
  socket.write('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HTTP/1.1\r\nHost: a\r\n\r\n')
  while (guard.requestLoad.waiting() < 3) await new Promise((resolve) => setTimeout(resolve, 5))
  socket.destroy()
  while (!held.every((response) => response.socket === null || response.socket.destroyed)) await new Promise((resolve) => setTimeout(resolve, 5))
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(guard.requestLoad.waiting(), 0)
})
