import type { FastifyRequest } from 'fastify'

// What a request log line says of the request. Query values are dropped: a caller may put a
// token there even though the service ignores it, and logs must never hold one. Headers are
// not logged at all.
export function serializeRequest (request: FastifyRequest): Record<string, string | undefined> {
  const queryStart = request.url.indexOf('?')
  return {
    method: request.method,
    url: queryStart === -1 ? request.url : `${request.url.slice(0, queryStart)}?[redacted]`,
    remoteAddress: request.ip,
  }
}
