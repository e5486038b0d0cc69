import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    // Set by ignoreBody (below); false on every other request (src/plugins/openapi-routes.ts
    // decorates the requests with it, so that they keep one shape).
    bodyIgnored: boolean
  }
}

// What Fastify is told of the body of a request whose operation reads none.
const noBody = Object.freeze({ 'content-type': undefined, 'content-length': undefined, 'transfer-encoding': undefined })

// The last step of an operation that declares no request body (src/request-path.ts): it reads
// none. Whatever a request sends with it (of any media type and size, or malformed) is left
// unread, and Node discards it once the request is answered. Fastify reads no GET's body, but
// would parse a DELETE's or POST's and answer 400, 413 or 415, none of which such an operation
// declares: it is told there is none. The steps before this one read the request's own
// headers; `100 Continue` is not sent (src/plugins/http-protocol.ts), and Node then closes the
// connection once answered.
export function ignoreBody (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (request.method !== 'GET' && request.method !== 'HEAD') request.headers = noBody
  request.bodyIgnored = true
  done()
}

// Whether the request's body is left for Node to discard: its connection stays open for the
// requests behind it, whatever the answer (src/http/error-response.ts).
export function bodyIgnored (request: FastifyRequest): boolean {
  return request.bodyIgnored
}
