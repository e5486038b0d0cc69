import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import type { RequestTurn } from './request-turns.js'

export type Exchange = readonly [IncomingMessage, ServerResponse]

// A client connection as the connection guard (src/http/connection-guard.ts) keeps it.
export interface GuardedConnection {
  readonly socket: Socket
  // Handed to the app and not yet answered.
  inFlight: number
  // Read, in the order sent, and waiting for those before them to be answered.
  readonly waiting: Exchange[]
  // Whether the guard has stopped reading the connection.
  readingPaused: boolean
  // Whether the errors Node makes when it closes go without stack traces.
  withoutStackTraces: boolean
  // The response that will be written last on this connection so far: the one that says
  // `Connection: close` once shutdown begins, and the one a client error's answer follows.
  lastResponse: ServerResponse | undefined
  // The last request answered before its body had arrived in full (a body its operation does not
  // read, src/http/ignored-body.ts): while its body is still arriving, a client error on the
  // connection is that request's, answered already.
  answeredBeforeItsBody: IncomingMessage | undefined
  // The turn of the request handed to the app last (src/http/request-turns.ts).
  lastTurn: RequestTurn | undefined
  // When its last response finished, during shutdown.
  idleSince: number
  // While its reading is stopped, when an answer was last written or its socket drained
  // (performance.now()).
  progressAt: number
}

// A connection the guard stopped reading, whose client has read none of its answers for
// stalledMs, is closed: else a few such clients would hold the bound on waiting requests for
// ever (Node's own timeouts end with a request's arrival).
export function closeStalledConnections (connections: Iterable<GuardedConnection>, stalledMs: number, log: FastifyBaseLogger): void {
  const stalledBefore = performance.now() - stalledMs
  for (const connection of connections) {
    if (!connection.readingPaused || connection.progressAt > stalledBefore) continue
    log.warn({ remoteAddress: connection.socket.remoteAddress, stalledMs },
      'connection closed: its client read none of its answers while its pipelined requests waited')
    connection.socket.destroy()
  }
}

// During shutdown, a connection idle for graceMs is closed: end(), not destroy(), so that a
// request that crosses the FIN on the wire is not met by a reset.
export function closeIdleConnections (connections: Iterable<GuardedConnection>, graceMs: number): void {
  const idleBefore = Date.now() - graceMs
  for (const connection of connections) {
    const unanswered = connection.inFlight + connection.waiting.length
    if (unanswered === 0 && connection.idleSince <= idleBefore && !connection.socket.writableEnded) connection.socket.end()
  }
}
