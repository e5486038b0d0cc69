import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

// What Fastify is told of the body of a request whose operation reads none.
const noBody = { 'content-type': undefined, 'content-length': undefined, 'transfer-encoding': undefined }
const requestsIgnoringBodies = new WeakSet<FastifyRequest>()

// The last step of an operation that declares no request body (src/request-path.ts): it reads
// none, as a GET does. Whatever a request sends with it (of any media type and size, or
// malformed) is left unread, and Node discards it once the request is answered: Fastify would
// parse a DELETE's or POST's body and answer 400, 413 or 415, none of which such an operation
// declares. The steps before it read the request's own headers; `100 Continue` is not sent.
export function ignoreBody (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  request.headers = noBody
  requestsIgnoringBodies.add(request)
  done()
}

// Whether the request's body is left for Node to discard: its connection stays open for the
// requests behind it, whatever the answer (src/http/error-response.ts).
export function bodyIgnored (request: FastifyRequest): boolean {
  return requestsIgnoringBodies.has(request)
}
