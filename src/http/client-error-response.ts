import { randomUUID } from 'node:crypto'
import { type ServerResponse, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import {
  type ApiError, HeaderFieldsTooLargeError, MalformedRequestError, RequestTimeoutError,
} from '../errors/api-errors.js'
import { parserCutCode } from './parser-cut.js'
import { commonResponseHeaders, errorBody } from './error-response.js'

// A request too malformed or too slow for Fastify to see (bad framing, oversized headers, the
// request timeout) never reaches the error handler; it still gets the spec's Error body,
// written straight to the socket.
// What the connection guard knows of a connection's answers still to be written.
export interface PendingAnswers {
  // The response that will be written last on a connection, while one is still to be written:
  // an answer written straight to the socket must follow it.
  readonly lastResponseOn: (socket: Socket) => ServerResponse | undefined
  // Requests read on it and not yet answered, the one at fault in a client error included.
  readonly unansweredOn: (socket: Socket) => number
  // Whether the request whose message is still arriving on it was answered already.
  readonly answeredWhileArriving: (socket: Socket) => boolean
}

// The answer says what it answered, or undefined when it closed the connection unanswered.
export function clientErrorAnswer (pending: PendingAnswers) {
  return function answerClientError (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): ApiError | undefined {
    return answer(this, error, socket, pending.lastResponseOn(socket), pending.unansweredOn(socket), pending.answeredWhileArriving(socket))
  }
}

function answer (
  app: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket, lastResponse: ServerResponse | undefined, unanswered: number,
  atFaultAnswered: boolean
): ApiError | undefined {
  // A connection past the waiting requests the service holds (the connection guard logged it)
  // is closed unanswered: an answer would queue behind the ones it is not reading. So is one
  // whose request at fault (its body timed out or broke off) has others before it still to be
  // answered: an answer now would be taken for the first of theirs.
  const atFaultBehindOthers = lastResponse !== undefined && !lastResponse.req.complete && unanswered > 1
  // So is one whose request at fault was answered already, before its body arrived (a body its
  // operation ignores, src/http/ignored-body.ts, or a GET's): a second answer to one request
  // would be taken for the next one's.
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.code === parserCutCode || !socket.writable || atFaultBehindOthers || atFaultAnswered) {
    socket.destroy()
    return undefined
  }
  const apiError = toClientApiError(error)
  const requestId = randomUUID()
  // Not the error itself: Node attaches the bytes it could not parse (rawPacket), which may
  // hold the request's Authorization header.
  const parseError = { name: error.name, code: error.code, message: error.message }
  app.log.info({ reqId: requestId, status: apiError.statusCode, code: apiError.code, parseError }, apiError.message)
  // Responses still to be written for earlier requests, received in full, go out first: written
  // before them, this answer would be taken for one of theirs. Pipelined responses are written
  // in order, so it follows the last. When the one request in flight is the one at fault, it is
  // answered at once.
  if (lastResponse?.req.complete === true && !lastResponse.writableFinished) {
    lastResponse.once('finish', () => writeRawErrorResponse(socket, apiError, requestId))
    lastResponse.once('close', () => { if (!lastResponse.writableFinished) socket.destroy() })
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
