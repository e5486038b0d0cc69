import { type IncomingMessage, Server, type ServerOptions, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify'
import type { PendingAnswers } from './client-error-response.js'
import { FairRequestQueue } from './fair-request-queue.js'
import { cutParserWhen } from './parser-cut.js'
import { type RequestTurn, requestTurn, takeTurn } from './request-turns.js'

const sweepIntervalMs = 100

// What the connection guard bounds.
export interface ConnectionLimits {
  // The most client connections open at once; Node refuses more (server.maxConnections).
  readonly maxConnections: number
  // The most requests of one connection handed to the app at once. Past it, the service reads
  // nothing more from the connection until answers have been written.
  readonly maxUnansweredRequests: number
  // The most requests read and waiting for those before them to be answered, over every
  // connection, past which no further connection may begin to wait: each holds at most one
  // read's (64 KiB of) requests, so the total may pass this by one read.
  readonly maxWaitingRequests: number
  // How long a connection may go with nothing read from it or written to it before Node closes
  // it (server.timeout): a client that has its requests waiting and reads none of the answers
  // would otherwise hold their places for ever.
  readonly inactiveConnectionMs: number
  // Once shutdown begins, how long a connection may stay idle before it is closed: time for a
  // request a client has already sent on it to arrive and be answered.
  readonly shutdownIdleGraceMs: number
}

// What the server is answering: requests answered since it started, and requests handed to the
// app and not yet answered (src/webhooks/delivery-pacer.ts gives way to them).
export interface RequestLoad {
  readonly answered: () => number
  readonly waiting: () => number
}

// The HTTP server under Fastify, with what Node's own settings do not bound (docs/reliability.md
// measures each against them), on Node's public APIs but one (src/http/parser-cut.ts):
// - Pipelining. Node parses every request a read brings (up to 64 KiB: over a thousand small
//   requests). Here a connection has at most maxUnansweredRequests handed to the app at once;
//   past that the guard stops reading it (socket.pause()), and its requests wait in order until
//   answers are written and the socket drains. A client that pipelines thousands gets every
//   answer, in order, at the pace it reads them; one that never reads holds at most one read's
//   requests, and Node closes its connection once nothing has moved on it for
//   inactiveConnectionMs. The requests waiting, over every connection, are bounded: a connection
//   whose request would begin to wait while maxWaitingRequests already do is closed at that
//   request (RFC 9112 §9.3.2 lets its client retry), so that many clients pipelining a little are
//   all served, and clients that never read hold a few reads' worth between them.
// - Fairness. A request pipelined behind another, or read in a burst, is worked through a few
//   milliseconds a turn of the event loop, and one request a turn while new connections arrive
//   (src/http/fair-request-queue.ts): neither a burst nor a client that pipelines keeps other
//   clients from the event loop, or new ones from being accepted.
// - Shutdown, from the app's first preClose hook: a connection's last answer says `Connection:
//   close`, and a connection idle for shutdownIdleGraceMs is closed, those the server accepts
//   until it stops listening included.
export class ConnectionGuard {
  readonly #limits: ConnectionLimits
  readonly #log: () => FastifyBaseLogger
  readonly #connections = new Map<Socket, GuardedConnection>()
  #waitingRequests = 0
  #requestsAnswered = 0
  // Requests handed to the app and not yet answered, over every open connection: a connection
  // that closes takes its own with it (Node emits no 'close' for a response still queued behind
  // another then). Those waiting in the guard are not counted.
  #requestsInFlight = 0
  #server: Server | undefined
  readonly #requestQueue = new FairRequestQueue((request, response) => { this.#handToApp(request, response) })
  #shuttingDown = false
  #handler: RequestHandler = () => undefined

  // One listener for every response's 'close' (emitted once), not a closure per request.
  readonly #responseClosed: (this: ServerResponse) => void

  constructor (limits: ConnectionLimits, log: () => FastifyBaseLogger) {
    this.#limits = limits
    this.#log = log
    const answered = (response: ServerResponse): void => { this.#answered(response) }
    this.#responseClosed = function () { answered(this) }
  }

  // For Fastify's serverFactory option: Node's server settings come from Fastify's `http` option,
  // which Fastify itself applies only to a server it creates.
  readonly serverFactory: FastifyServerFactory = (handler, fastifyOptions) => {
    this.#handler = handler
    const server = new GentlyClosingServer((fastifyOptions.http ?? {}) as ServerOptions, (request, response) => {
      this.#handle(request, response)
    }, () => { this.beginShutdown() })
    this.#server = server
    server.maxConnections = this.#limits.maxConnections
    server.timeout = this.#limits.inactiveConnectionMs
    // Runs after Node's own connection listener, which gives the socket the parser the guard cuts.
    server.on('connection', (socket: Socket) => {
      this.#requestQueue.connectionArrived()
      this.#track(socket)
    })
    return server
  }

  // What the answer to a client error must know of a connection (src/http/client-error-response.ts).
  readonly pendingAnswers: PendingAnswers = {
    lastResponseOn: (socket) => this.#connections.get(socket)?.lastResponse,
    unansweredOn: (socket) => {
      const connection = this.#connections.get(socket)
      return connection === undefined ? 0 : connection.inFlight + connection.waiting.length
    },
    answeredWhileArriving: (socket) => this.#connections.get(socket)?.answeredBeforeItsBody?.complete === false,
  }

  // Requests read and waiting for those before them, over every connection.
  get waitingRequests (): number { return this.#waitingRequests }

  readonly requestLoad: RequestLoad = {
    answered: () => this.#requestsAnswered,
    waiting: () => this.#requestsInFlight,
  }

  #track (socket: Socket): void {
    const connection: GuardedConnection = {
      socket, inFlight: 0, waiting: [], readingPaused: false, lastResponse: undefined, answeredBeforeItsBody: undefined, lastTurn: undefined, idleSince: Date.now(),
    }
    this.#connections.set(socket, connection)
    socket.once('close', () => {
      this.#connections.delete(socket)
      this.#requestsInFlight -= connection.inFlight
      this.#waitingRequests -= connection.waiting.length
      connection.waiting.length = 0
    })
    socket.on('drain', () => { this.#handOnWaiting(connection) })
    this.#limitWaiting(connection)
    // Node resumes a socket it paused itself once its answers drain: one the guard stopped
    // reading stays stopped until its own requests have been handed on.
    socket.on('resume', () => { if (connection.readingPaused) socket.pause() })
  }

  // A connection whose request would begin to wait while maxWaitingRequests already do is closed
  // at that request (src/http/parser-cut.ts). Judged only as a connection begins to wait: one
  // admitted is never cut in the middle of its read, so the bound is exceeded by one read at most.
  #limitWaiting (connection: GuardedConnection): void {
    cutParserWhen(connection.socket, () => {
      const startsWaiting = !connection.readingPaused && !this.#mayHandOn(connection)
      if (!startsWaiting || this.#waitingRequests < this.#limits.maxWaitingRequests) return false
      this.#log().warn({ remoteAddress: connection.socket.remoteAddress, waitingRequests: this.#waitingRequests, limit: this.#limits.maxWaitingRequests },
        'connection closed: its pipelined requests would wait beyond the requests the service holds waiting')
      return true
    })
  }

  #handle (request: IncomingMessage, response: ServerResponse): void {
    const connection = this.#connections.get(request.socket)
    if (connection === undefined) {
      this.#handler(request, response)
      return
    }
    if (this.#shuttingDown) {
      // Only the last response of a connection closes it: earlier pipelined ones go out first.
      if (connection.lastResponse !== undefined && !connection.lastResponse.headersSent) {
        connection.lastResponse.shouldKeepAlive = true
      }
      response.shouldKeepAlive = false
    }
    connection.lastResponse = response
    response.on('close', this.#responseClosed)
    if (connection.waiting.length === 0 && this.#mayHandOn(connection)) {
      this.#handOn(connection, request, response, false)
      return
    }
    connection.waiting.push([request, response])
    this.#waitingRequests += 1
    if (!connection.readingPaused) {
      connection.readingPaused = true
      connection.socket.pause()
    }
  }

  #mayHandOn (connection: GuardedConnection): boolean {
    return connection.inFlight < this.#limits.maxUnansweredRequests && !connection.socket.writableNeedDrain
  }

  // A request that waited is always queued, never handled at once: handled inside the callback of
  // the answer before it, a client whose answers are written as fast as they are made would keep
  // the event loop in that chain of callbacks, and new connections would wait to be accepted.
  #handOn (connection: GuardedConnection, request: IncomingMessage, response: ServerResponse, waited: boolean): void {
    // Handed on in the order read, they take effect in that order (src/http/request-turns.ts).
    connection.lastTurn = takeTurn(request, connection.lastTurn)
    connection.inFlight += 1
    this.#requestsInFlight += 1
    this.#requestQueue.handle(request, response, waited || connection.inFlight > 1)
  }

  #handToApp (request: IncomingMessage, response: ServerResponse): void {
    this.#handler(request, response)
    // Fastify says `Connection: close` on every request it routes once it is closing: on one with
    // requests pipelined behind it, the connection would close with their answers unwritten. The
    // connection's last response closes it instead (#handle, beginShutdown).
    if (!response.headersSent && response.getHeader('connection') === 'close' &&
      this.#connections.get(request.socket)?.lastResponse !== response) response.removeHeader('connection')
  }

  #handOnWaiting (connection: GuardedConnection): void {
    while (connection.waiting.length > 0 && this.#mayHandOn(connection)) {
      const [request, response] = connection.waiting.shift() as Exchange
      this.#waitingRequests -= 1
      this.#handOn(connection, request, response, true)
    }
    if (connection.waiting.length === 0 && connection.readingPaused) {
      connection.readingPaused = false
      connection.socket.resume()
    }
  }

  #answered (response: ServerResponse): void {
    this.#requestsAnswered++
    requestTurn(response.req)?.done()
    const connection = this.#connections.get(response.req.socket)
    if (connection === undefined) return
    if (connection.lastResponse === response) connection.lastResponse = undefined
    connection.answeredBeforeItsBody = response.req.complete ? undefined : response.req
    if (this.#shuttingDown) connection.idleSince = Date.now()
    // A connection gone has nothing more to hand on (and its waiting responses were never handed).
    if (connection.socket.destroyed) return
    connection.inFlight -= 1
    this.#requestsInFlight -= 1
    this.#handOnWaiting(connection)
  }

  // Called as the app begins to close (src/app.ts), and again by Node's server.close().
  beginShutdown (): void {
    if (this.#shuttingDown) return
    this.#shuttingDown = true
    const now = Date.now()
    for (const connection of this.#connections.values()) {
      connection.idleSince = now
      const last = connection.lastResponse
      if (last !== undefined && !last.headersSent) last.shouldKeepAlive = false
    }
    const sweep = setInterval(() => {
      // The server still listens while the preClose hooks run: it may accept more.
      if (this.#connections.size === 0 && this.#server?.listening !== true) clearInterval(sweep)
      closeIdleConnections(this.#connections.values(), this.#limits.shutdownIdleGraceMs)
    }, sweepIntervalMs)
    sweep.unref()
  }
}

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void
type Exchange = readonly [IncomingMessage, ServerResponse]

// A client connection as the connection guard keeps it.
interface GuardedConnection {
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
class GentlyClosingServer extends Server {
  constructor (options: ServerOptions, listener: RequestHandler, private readonly beginShutdown: () => void) {
    super(options, listener)
  }

  override closeIdleConnections (): void {
    this.beginShutdown()
  }
}

// During shutdown, a connection idle for graceMs is closed: end(), not destroy(), so that a
// request that crosses the FIN on the wire is not met by a reset.
function closeIdleConnections (connections: Iterable<GuardedConnection>, graceMs: number): void {
  const idleBefore = Date.now() - graceMs
  for (const connection of connections) {
    const unanswered = connection.inFlight + connection.waiting.length
    if (unanswered === 0 && connection.idleSince <= idleBefore && !connection.socket.writableEnded) connection.socket.end()
  }
}
