import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ApiError } from '../errors/api-errors.js'
import { bodyIgnored } from './ignored-body.js'
import { toApiError } from './to-api-error.js'
import { recordFailure } from './request-log.js'

// Headers every response carries, errors included: nosniff, so a browser never reads a JSON
// error as HTML, and the request id, so a caller can quote it when reporting a problem.
export function commonResponseHeaders (requestId: string): Record<string, string> {
  return { 'x-content-type-options': 'nosniff', 'x-request-id': requestId }
}

export function errorBody (apiError: ApiError): { error: number, message: string } {
  return { error: apiError.code, message: apiError.message }
}

// The one way a failure leaves the service once Fastify has a request for it: mapped to the
// spec's Error body, told to the request's access line (5xx details go to the log only), with the
// common headers even where Fastify's onSend hooks do not run (a URL that cannot be routed).
export async function sendError (error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const apiError = toApiError(error, request)
  // Answered before its body arrived (refused credentials, 404, 405, 413, 415): the connection
  // is closed, so the rest of the body is neither read nor answered a second time. Judged once
  // the read being parsed is through: a request handled as its headers are parsed has the rest
  // of its message, when that read brought it, parsed after (and closing its connection would
  // drop the requests pipelined behind it for nothing). Fastify says `Connection: close` on every
  // body it could not parse, read or not: a request received in full keeps its connection
  // (`keep-alive` said here, as removing the header would stop Node from saying anything), unless
  // Node would close it anyway, or its client asked to send the body only once told to continue.
  // A body its operation ignores, once the steps before have passed, is discarded by Node as it
  // arrives (src/http/ignored-body.ts): the connection is kept for the requests behind it.
  const mayCloseEarly = !bodyIgnored(request)
  if (mayCloseEarly && !request.raw.complete) await new Promise((resolve) => setImmediate(resolve))
  if (mayCloseEarly && !request.raw.complete) reply.header('connection', 'close')
  else if (reply.hasHeader('connection') && reply.raw.shouldKeepAlive && request.headers.expect === undefined) reply.header('connection', 'keep-alive')
  // A 503 is declared and passes (the store is down for a moment): its code and the one line of
  // its cause say all, where a stack trace per refused request would flood the log during an outage.
  if (apiError.statusCode === 503) recordFailure(reply, apiError, undefined, causeOf(error))
  else recordFailure(reply, apiError, apiError.statusCode >= 500 ? error : undefined)
  return reply
    .code(apiError.statusCode)
    .headers({ ...commonResponseHeaders(request.id), ...apiError.headers })
    .type('application/json; charset=utf-8')
    .send(errorBody(apiError))
}

// What the backend said, in a line: "57P01 terminating connection due to administrator command".
function causeOf (error: unknown): string | undefined {
  const cause = error instanceof Error ? error.cause : undefined
  if (!(cause instanceof Error)) return undefined
  const code = (cause as { code?: unknown }).code
  return typeof code === 'string' ? `${code} ${cause.message}` : cause.message
}
