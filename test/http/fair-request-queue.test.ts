import type { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { test } from 'tap'
import { FairRequestQueue } from '../../src/http/fair-request-queue.js'

const nextTurn = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

// Requests the queue is given, each with a socket of its own that is not destroyed.
function exchanges (count: number): Array<[IncomingMessage, ServerResponse]> {
  return Array.from({ length: count }, () => [{ socket: new Socket() } as IncomingMessage, {} as ServerResponse])
}

test('a request alone on its connection is handled at once; pipelined ones wait for the next turn', async (t) => {
  const handled: IncomingMessage[] = []
  const queue = new FairRequestQueue((request) => { handled.push(request) })
  const [alone, ...pipelined] = exchanges(4)
  queue.handle(...alone!, false)
  t.equal(handled.length, 1, 'handled at once')
  for (const exchange of pipelined) queue.handle(...exchange, true)
  t.equal(handled.length, 1, 'the pipelined ones wait')
  await nextTurn()
  t.equal(handled.length, 4, 'a turn works through a short backlog')
})

test('while new connections arrive, the backlog takes one request a turn, so that Node gets to accept them', async (t) => {
  const handled: IncomingMessage[] = []
  const queue = new FairRequestQueue((request) => { handled.push(request) })
  for (const exchange of exchanges(10)) queue.handle(...exchange, true)
  queue.connectionArrived()
  await nextTurn()
  t.equal(handled.length, 1, 'one request in the turn after an arrival')
  await nextTurn()
  t.equal(handled.length, 10, 'the rest in the next turn, with no arrival since')
})

test('a request whose connection closed while it waited is dropped', async (t) => {
  const handled: IncomingMessage[] = []
  const queue = new FairRequestQueue((request) => { handled.push(request) })
  const [[request, response]] = exchanges(1) as [[IncomingMessage, ServerResponse]]
  request.socket.destroy()
  queue.handle(request, response, true)
  await nextTurn()
  t.equal(handled.length, 0)
})
