import type { Socket } from 'node:net'
import { MalformedRequestError } from '../errors/api-errors.js'

// A request too malformed for Fastify to route (bad header, bad framing) never reaches the
// error handler; it still gets the spec's Error body.
export function answerClientError (error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const apiError = new MalformedRequestError('the HTTP request is malformed')
  const body = JSON.stringify({ error: apiError.code, message: apiError.message })
  socket.end([
    'HTTP/1.1 400 Bad Request',
    'Content-Type: application/json; charset=utf-8',
    'X-Content-Type-Options: nosniff',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n'))
}
