import { randomUUID } from 'node:crypto'
import { type ServerResponse, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import {
  type ApiError, HeaderFieldsTooLargeError, MalformedRequestError, RequestTimeoutError,
} from '../errors/api-errors.js'
import { commonResponseHeaders } from './common-headers.js'
import { tooManyUnansweredRequestsCode } from './connection-guard.js'
import { errorBody } from './error-response.js'

// A request too malformed or too slow for Fastify to see (bad framing, oversized headers, the
// request timeout) never reaches the error handler; it still gets the spec's Error body,
// written straight to the socket.
// Says what it answered, or undefined when it closed the connection unanswered.
export function answerClientError (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): ApiError | undefined {
  // A connection past MAX_UNANSWERED_REQUESTS (the connection guard logged it) is closed
  // unanswered: an answer would queue behind the ones it is not reading.
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.code === tooManyUnansweredRequestsCode || !socket.writable) {
    socket.destroy()
    return undefined
  }
  const apiError = toClientApiError(error)
  const requestId = randomUUID()
  // Not the error itself: Node attaches the bytes it could not parse (rawPacket), which may
  // hold the request's Authorization header.
  const parseError = { name: error.name, code: error.code, message: error.message }
  this.log.info({ reqId: requestId, status: apiError.statusCode, code: apiError.code, parseError }, apiError.message)
  // A response still being prepared for an earlier request, received in full, goes out first:
  // written before it, this answer would be taken for that request's. When the request in
  // flight is the one at fault (its body timed out or broke off), it is answered at once.
  const responseInFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (responseInFlight?.req.complete === true && !responseInFlight.writableFinished) {
    responseInFlight.once('finish', () => writeRawErrorResponse(socket, apiError, requestId))
    responseInFlight.once('close', () => { if (!responseInFlight.writableFinished) socket.destroy() })
    return apiError
  }
  writeRawErrorResponse(socket, apiError, requestId)
  return apiError
}

// An Error response written straight to a socket, which is then closed.
export function writeRawErrorResponse (socket: Socket, apiError: ApiError, requestId: string): void {
  if (!socket.writable) return
  const body = JSON.stringify(errorBody(apiError))
  const headers = {
    ...commonResponseHeaders(requestId),
    ...apiError.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  }
  socket.end([
    `HTTP/1.1 ${apiError.statusCode} ${STATUS_CODES[apiError.statusCode]}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    '',
    body,
  ].join('\r\n'))
}

function toClientApiError (error: NodeJS.ErrnoException): ApiError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT': return new RequestTimeoutError()
    case 'HPE_HEADER_OVERFLOW': return new HeaderFieldsTooLargeError()
    default: return new MalformedRequestError('the HTTP request is malformed')
  }
}
