import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'
import type { ApiError } from '../errors/api-errors.js'

// What a request log line says of the request, and who it authenticated as (a token's name, a
// JWT's sub). Query values are dropped: a caller may put a token there even though the service
// ignores it, and logs must never hold one. Headers are not logged at all.
export function serializeRequest (request: FastifyRequest): Record<string, string | undefined> {
  const queryStart = request.url.indexOf('?')
  return {
    method: request.method,
    url: queryStart === -1 ? request.url : `${request.url.slice(0, queryStart)}?[redacted]`,
    remoteAddress: request.ip,
    identity: request.identity?.key,
  }
}

interface Failure {
  readonly failure: { readonly code: number, readonly message: string }
  // What went wrong inside the service, for a 5xx only: the client's message never carries it.
  readonly err?: unknown
  // Why a 503's backend was unavailable, in a line (never sent to the client).
  readonly cause?: string
}

const failures = new WeakMap<FastifyReply, Failure>()

// The error an answer carries goes into its request's one access line, not a line of its own.
export function recordFailure (reply: FastifyReply, apiError: ApiError, internalError?: unknown, cause?: string): void {
  const failure = { code: apiError.code, message: apiError.message }
  failures.set(reply, { failure, ...internalError === undefined ? {} : { err: internalError }, ...cause === undefined ? {} : { cause } })
}

// Told of every request once it is answered, with the same figures as its access line.
export type RequestCompleted = (request: FastifyRequest, reply: FastifyReply) => void

// One access line per request, once it is answered, whatever the answer: the request (as above),
// its status, its response time, the Error it was answered with if any and, from the request's
// logger, its id. Fastify's own "incoming request" line would double the logging cost of every
// request and tell nothing this line does not.
// Fastify calls this for every request, at any log level; the metrics count requests here
// (onCompleted) rather than in an onResponse hook, which would cost every request a hook run.
export class AccessLog extends LogController {
  constructor (private readonly onCompleted?: RequestCompleted) {
    super()
  }

  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    this.onCompleted?.(request, reply)
    const failure = failures.get(reply)
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime, ...failure }, 'request errored')
    } else if (failure?.err !== undefined) {
      reply.log.error({ req: request, res: reply, responseTime: reply.elapsedTime, ...failure }, 'request failed')
    } else if (reply.statusCode >= 500) {
      reply.log.warn({ req: request, res: reply, responseTime: reply.elapsedTime, ...failure }, 'request refused')
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime, ...failure }, 'request completed')
    }
  }
}
