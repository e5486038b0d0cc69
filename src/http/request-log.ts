import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'

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

// One access line per request, once it is answered: the request (as above), its status, its
// response time and, from the request's logger, its id. Fastify's own "incoming request" line
// would double the logging cost of every request and tell nothing this line does not.
export class AccessLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored')
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
    }
  }
}
