import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http'
import { Server as NetServer, type Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify'

export interface ConnectionLimits {
  // The most client connections open at once; Node refuses more.
  readonly maxConnections: number
  // The most requests one connection may have sent and not yet had answered.
  readonly maxUnansweredRequests: number
  // Once shutdown begins, how long a connection may stay idle before it is closed: time for a
  // request a client has already sent on it to arrive and be answered.
  readonly shutdownIdleGraceMs: number
}

// The settings of Fastify's options that it would apply to a server of its own.
interface FastifyServerSettings {
  readonly http?: ServerOptions
  readonly keepAliveTimeout?: number
  readonly requestTimeout?: number
  readonly connectionTimeout?: number
}

interface Connection {
  unanswered: number
  // The response that will be written last on this connection so far: the one that says
  // `Connection: close` once shutdown begins.
  lastResponse: ServerResponse | undefined
  // When its last response finished, during shutdown.
  idleSince: number
}

const sweepIntervalMs = 100
// The longest the backlog may keep the event loop before other connections are read.
const backlogSliceMs = 5
// Requests handled as they are read, in one turn of the event loop; the rest of a burst waits in
// the backlog. The benchmark's 32 connections stay below.
const immediateRequestsPerTurn = 64

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void

// Node's HTTP parser calls this for each request whose headers it has read; its return value
// goes back to the parser, where -1 stops parsing with an error (HPE_CB_HEADERS_COMPLETE).
type OnIncoming = (request: IncomingMessage, keepAlive: boolean) => number
interface HttpParser { onIncoming: OnIncoming | null }

// The parse error a connection gets when it has sent more than maxUnansweredRequests: the
// service's clientError handler closes it without an answer.
export const tooManyUnansweredRequestsCode = 'HPE_CB_HEADERS_COMPLETE'

// When a connection closes, Node aborts each request still unanswered on it with an error whose
// stack trace it captures, a good part of the work a burst of overflowing connections costs
// (docs/reliability.md). For such a connection, whose requests nobody will read about, the traces
// are left out: the limit is lowered just before Node's own close listener and put back just
// after it.
function withoutStackTraces (socket: Socket): void {
  let stackTraceLimit = Error.stackTraceLimit
  const restore = (): void => { Error.stackTraceLimit = stackTraceLimit }
  socket.prependOnceListener('close', () => {
    stackTraceLimit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    // Put back even if a listener between throws.
    process.nextTick(restore)
  })
  socket.once('close', restore)
}

// What the server is answering: requests answered since it started, and requests read and not
// yet answered (src/webhooks/delivery-pacer.ts gives way to them).
export interface RequestLoad {
  readonly answered: () => number
  readonly waiting: () => number
}

// The HTTP server under Fastify, with what Node's own does not bound:
// - Pipelining. Node parses every request a read brings (64 KiB: over a thousand small
//   requests) at once, and answers them in order, holding each until those before it are
//   written. Node stops reading a connection whose answers are not being read, but only after
//   the whole read is parsed: a few hundred such connections block the event loop for seconds
//   and hold gigabytes (docs/reliability.md). Here a connection's parser stops at the request
//   that would make more than maxUnansweredRequests unanswered, before Node builds anything for
//   it, and the connection is closed; the rest of its requests are dropped unanswered (RFC 9112
//   §9.3.2 lets its client retry them on a new connection). And a request pipelined behind another on its
//   connection, or read in a burst of more than immediateRequestsPerTurn, waits in a backlog
//   that is worked through a few milliseconds at a time, so that a burst of connections' worth
//   of requests cannot keep other clients from the event loop.
// - Shutdown. Node's close() resets idle keep-alive connections at once, so a request a client
//   sent a moment before, still in flight, is lost. Here closing stops new connections, answers
//   every request that arrives with `Connection: close`, and closes a connection only once it
//   has been idle for shutdownIdleGraceMs.
export class ConnectionGuard {
  readonly #limits: ConnectionLimits
  readonly #log: () => FastifyBaseLogger
  readonly #connections = new Map<Socket, Connection>()
  readonly #backlog: Array<[IncomingMessage, ServerResponse, RequestHandler]> = []
  #backlogScheduled = false
  #immediateThisTurn = 0
  readonly #startTurn = (): void => { this.#immediateThisTurn = 0 }
  #shuttingDown = false
  #requestsAnswered = 0
  // The sum of every open connection's unanswered requests: a connection that closes takes its
  // own with it (Node emits no 'close' for a response still queued behind another then).
  #requestsUnanswered = 0

  // One listener for every response's 'close' (emitted once), not a closure per request.
  readonly #responseClosed: (this: ServerResponse) => void

  constructor (limits: ConnectionLimits, log: () => FastifyBaseLogger) {
    this.#limits = limits
    this.#log = log
    const answered = (response: ServerResponse): void => { this.#answered(response) }
    this.#responseClosed = function () { answered(this) }
  }

  // For Fastify's serverFactory option. Fastify sets its timeouts on a server it creates itself;
  // a factory's server gets them here.
  readonly serverFactory: FastifyServerFactory = (handler, fastifyOptions) => {
    const options = fastifyOptions as FastifyServerSettings
    const server = createServer(options.http ?? {}, (request, response) => {
      this.#handle(request, response, handler)
    })
    server.keepAliveTimeout = options.keepAliveTimeout ?? 72_000
    server.requestTimeout = options.requestTimeout ?? 0
    server.setTimeout(options.connectionTimeout ?? 0)
    server.maxConnections = this.#limits.maxConnections
    // Runs after Node's own connection listener, which gives the socket its parser.
    server.on('connection', (socket: Socket) => {
      const connection: Connection = { unanswered: 0, lastResponse: undefined, idleSince: Date.now() }
      this.#connections.set(socket, connection)
      socket.once('close', () => {
        this.#requestsUnanswered -= connection.unanswered
        this.#connections.delete(socket)
      })
      this.#limitUnanswered(socket, connection)
    })
    server.close = (callback) => {
      this.#beginShutdown()
      NetServer.prototype.close.call(server, callback)
      return server
    }
    return server
  }

  readonly requestLoad: RequestLoad = {
    answered: () => this.#requestsAnswered,
    waiting: () => this.#requestsUnanswered,
  }

  #limitUnanswered (socket: Socket, connection: Connection): void {
    const parser = (socket as Socket & { parser?: HttpParser | null }).parser
    const nodeOnIncoming = parser?.onIncoming
    if (parser === undefined || parser === null || typeof nodeOnIncoming !== 'function') {
      throw new Error('Node\'s HTTP server no longer gives each connection a parser with onIncoming: the unanswered-request limit cannot work')
    }
    parser.onIncoming = (request, keepAlive) => {
      connection.unanswered += 1
      this.#requestsUnanswered += 1
      if (connection.unanswered <= this.#limits.maxUnansweredRequests) return nodeOnIncoming(request, keepAlive)
      this.#log().warn({ remoteAddress: socket.remoteAddress, limit: this.#limits.maxUnansweredRequests },
        'connection closed: more requests unanswered on it than MAX_UNANSWERED_REQUESTS')
      withoutStackTraces(socket)
      return -1
    }
  }

  #handle (request: IncomingMessage, response: ServerResponse, handler: RequestHandler): void {
    const connection = this.#connections.get(request.socket)
    if (connection === undefined) {
      handler(request, response)
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
    if (connection.unanswered === 1 && this.#immediateThisTurn < immediateRequestsPerTurn) {
      if (this.#immediateThisTurn++ === 0) setImmediate(this.#startTurn)
      handler(request, response)
    } else {
      this.#backlog.push([request, response, handler])
      this.#scheduleBacklog()
    }
  }

  #scheduleBacklog (): void {
    if (this.#backlogScheduled) return
    this.#backlogScheduled = true
    setImmediate(() => {
      this.#backlogScheduled = false
      const sliceEnd = performance.now() + backlogSliceMs
      let next: [IncomingMessage, ServerResponse, RequestHandler] | undefined
      while (performance.now() < sliceEnd && (next = this.#backlog.shift()) !== undefined) {
        const [request, response, handler] = next
        if (!request.socket.destroyed) handler(request, response)
      }
      if (this.#backlog.length > 0) this.#scheduleBacklog()
    })
  }

  #answered (response: ServerResponse): void {
    this.#requestsAnswered++
    const connection = this.#connections.get(response.req.socket)
    if (connection === undefined) return
    connection.unanswered -= 1
    this.#requestsUnanswered -= 1
    if (connection.lastResponse === response) connection.lastResponse = undefined
    if (this.#shuttingDown) connection.idleSince = Date.now()
  }

  #beginShutdown (): void {
    if (this.#shuttingDown) return
    this.#shuttingDown = true
    const now = Date.now()
    for (const connection of this.#connections.values()) {
      connection.idleSince = now
      const last = connection.lastResponse
      if (last !== undefined && !last.headersSent) last.shouldKeepAlive = false
    }
    const sweep = setInterval(() => {
      if (this.#connections.size === 0) clearInterval(sweep)
      this.#closeIdleConnections()
    }, sweepIntervalMs)
    sweep.unref()
  }

  // end(), not destroy(): a request that crosses the FIN on the wire is not met by a reset.
  #closeIdleConnections (): void {
    const idleBefore = Date.now() - this.#limits.shutdownIdleGraceMs
    for (const [socket, connection] of this.#connections) {
      if (connection.unanswered === 0 && connection.idleSince <= idleBefore && !socket.writableEnded) socket.end()
    }
  }
}
