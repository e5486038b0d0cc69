import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { type ApiError, MethodNotAllowedError, NotFoundError } from '../errors/api-errors.js'
import { writeRawErrorResponse } from '../http/client-error-response.js'
import { httpMethods, type LoadedOpenApiDocument, type OpenApiDocument, pathTemplatePattern } from '../openapi/openapi-document.js'

export interface UnroutedRequestsOptions {
  readonly openApi: LoadedOpenApiDocument
  readonly basePath: string
}

// A request no operation matches: on a path the spec declares it is a 405 naming the methods
// declared there, on any other path a 404. Both are decided in onRequest, before a body is
// read, for every method Node parses, even those Fastify cannot route (CONNECT included).
async function unroutedRequests (app: FastifyInstance, { openApi: { document }, basePath }: UnroutedRequestsOptions): Promise<void> {
  const unrouted = unroutedRefusal(document, basePath)
  app.addHook('onRequest', (request, _reply, done) => {
    done(request.is404 ? unrouted(request.method, request.url) : undefined)
  })
  // Never reached, since the hook above answers first; it makes this context, and so the
  // hook, the one Fastify uses for unrouted requests.
  app.setNotFoundHandler(async (request) => {
    throw unrouted(request.method, request.url)
  })
  // Node hands CONNECT to this event, not to Fastify, and would otherwise drop the connection.
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    writeRawErrorResponse(socket, unrouted('CONNECT', request.url ?? '/'), randomUUID())
  })
}

// The refusal of a request that no operation matches, by its method and its URL. The mock
// (src/mock/) refuses such requests with it too.
export function unroutedRefusal (document: OpenApiDocument, basePath: string): (method: string, url: string) => ApiError {
  const declaredPaths = Object.entries(document.paths).map(([path, pathItem]) => ({
    pattern: pathTemplatePattern(path, basePath),
    allowedMethods: httpMethods.filter((method) => pathItem[method] !== undefined).map((method) => method.toUpperCase()),
  }))
  return (method, url) => {
    const path = routablePath(url)
    const declared = declaredPaths.find(({ pattern }) => pattern.test(path))
    return declared === undefined
      ? NotFoundError.forRoute(method, path)
      : new MethodNotAllowedError(method, declared.allowedMethods)
  }
}

// The path as the router sees it: without query or fragment, from an absolute-form URL too,
// and with percent-escapes decoded (but for "/", which would change the path's segments).
function routablePath (url: string): string {
  const pathname = /^https?:\/\//i.test(url) ? new URL(url).pathname : url.split(/[?#]/)[0] ?? ''
  try {
    return decodeURI(pathname)
  } catch {
    return pathname
  }
}

// The hooks of http-protocol (the Host check) run before the 404/405 decision made here.
export default fp(unroutedRequests, {
  name: 'unrouted-requests',
  fastify: '5.x',
  dependencies: ['error-responses', 'response-headers', 'http-protocol'],
})
