import type { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { test } from 'tap'
import { FairRequestQueue } from '../../src/http/fair-request-queue.js'

// A queue whose handler records the requests it is given.
function recordingQueue (): { handled: IncomingMessage[], queue: FairRequestQueue } {
  const handled: IncomingMessage[] = []
  return { handled, queue: new FairRequestQueue((request) => { handled.push(request) }) }
}

const nextTurn = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

// Requests the queue is given, each with a socket of its own that is not destroyed.
function exchanges (count: number): Array<[IncomingMessage, ServerResponse]> {
  return Array.from({ length: count }, () => [{ socket: new Socket() } as IncomingMessage, {} as ServerResponse])
}

test('a request alone on its connection is handled at once; pipelined ones wait for the next turn', async (t) => {
  const { handled, queue } = recordingQueue()
  const [alone, ...pipelined] = exchanges(4)
  queue.handle(...alone!, false)
  t.equal(handled.length, 1, 'handled at once')
  for (const exchange of pipelined) queue.handle(...exchange, true)
  t.equal(handled.length, 1, 'the pipelined ones wait')
  await nextTurn()
  t.equal(handled.length, 4, 'a turn works through a short backlog')
})

test('while new connections arrive, the backlog takes one request a turn, so that Node gets to accept them', async (t) => {
  const { handled, queue } = recordingQueue()
  for (const exchange of exchanges(10)) queue.handle(...exchange, true)
  queue.connectionArrived()
  await nextTurn()
  t.equal(handled.length, 1, 'one request in the turn after an arrival')
  await nextTurn()
  t.equal(handled.length, 10, 'the rest in the next turn, with no arrival since')
})

test('requests whose connections closed while they waited are dropped, and take no turn', async (t) => {
  const { handled, queue } = recordingQueue()
  const closed = exchanges(5)
  for (const [request] of closed) request.socket.destroy()
  const [live] = exchanges(1)
  for (const exchange of [...closed, live!]) queue.handle(...exchange, true)
  queue.connectionArrived()
  await nextTurn()
  t.same(handled, [live![0]], 'the one request of the turn after an arrival is a live one')
})
