import { type IncomingMessage, Server, type ServerOptions, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { RequestTurn } from './request-turns.js'

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void
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
}

// Node's server, closing gently. Node's close() calls closeIdleConnections(), which resets every
// idle keep-alive connection at once, so a request a client sent a moment before, still in
// flight, would be lost (docs/reliability.md has the measurement); here the guard closes them
// once they have been idle for a while.
export class GentlyClosingServer extends Server {
  constructor (options: ServerOptions, listener: RequestHandler, private readonly beginShutdown: () => void) {
    super(options, listener)
  }

  override closeIdleConnections (): void {
    this.beginShutdown()
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
