import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import fastifyAuth from '@fastify/auth'
import type {
  FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler, RouteHandlerMethod,
} from 'fastify'
import fp from 'fastify-plugin'
import openapiGlue from 'fastify-openapi-glue'
import type { SecurityHandler } from '../auth/bearer-auth.js'
import { type ApiError, MethodNotAllowedError, NotFoundError, SchemaViolationError } from '../errors/api-errors.js'
import { writeRawErrorResponse } from '../http/client-error-response.js'
import { markInt64Schemas } from '../spec/exact-int64.js'
import { markRequestBodyStrings } from '../spec/storable-text.js'
import {
  httpMethods, listOperations, pathTemplatePattern, securityOf, type LoadedOpenApiDocument,
  type OpenApiDocument, type OperationEntry,
} from '../spec/openapi-document.js'

export interface OpenApiRoutesOptions {
  readonly openApi: LoadedOpenApiDocument
  // Keyed by operationId.
  readonly handlers: Readonly<Record<string, unknown>>
  // Keyed by the names of components.securitySchemes.
  readonly securityHandlers: Readonly<Record<string, SecurityHandler>>
  readonly basePath: string
}

// The spec, not code, decides which routes exist, how each is validated and which are
// protected: fastify-openapi-glue builds a route per operation, and each route's security
// requirements become an onRequest hook, so credentials are checked before the body is read.
async function openApiRoutes (app: FastifyInstance, options: OpenApiRoutesOptions): Promise<void> {
  const { openApi: { document }, handlers, basePath } = options
  const operations = listOperations(document)
  const missing = operations.filter(({ operation: { operationId } }) =>
    operationId === undefined || !Object.hasOwn(handlers, operationId))
  if (missing.length > 0) {
    throw new Error(`openapi.yaml declares operations with no handler: ${missing.map(describe).join(', ')}`)
  }

  await app.register(fastifyAuth)
  await app.register(openapiGlue, {
    specification: markRequestBodyStrings(markInt64Schemas(document)),
    prefix: basePath,
    operationResolver: (operationId: string, method: string, openapiPath: string) => {
      const entry = operations.find((candidate) =>
        candidate.path === openapiPath && candidate.method === method.toLowerCase())
      // Without its spec entry a route's security is unknown: refuse to start rather than
      // serve it unprotected.
      if (entry === undefined) throw new Error(`fastify-openapi-glue asked for ${method} ${openapiPath}, which openapi.yaml does not declare`)
      const authenticate = authenticationHook(app, document, entry, options)
      return {
        method,
        url: toFastifyPath(openapiPath),
        handler: handlers[operationId] as RouteHandlerMethod,
        ...(authenticate === undefined ? {} : { onRequest: authenticate }),
        ...(entry.operation.requestBody?.required === true ? { preValidation: requireBody } : {}),
      }
    },
  })
  answerUnroutedRequests(app, document, basePath)
}

// An operation's security requirements as @fastify/auth sees them: any one requirement may
// pass (OR), and every scheme inside it must (AND). `security: []` means a public operation.
function authenticationHook (
  app: FastifyInstance,
  document: OpenApiDocument,
  entry: OperationEntry,
  { securityHandlers }: OpenApiRoutesOptions,
): onRequestHookHandler | undefined {
  const requirements = securityOf(document, entry.operation)
  if (requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0)) {
    return undefined
  }
  const alternatives = requirements.map((requirement) => Object.keys(requirement).map((scheme) => {
    const handler = securityHandlers[scheme]
    if (handler === undefined) throw new Error(`${describe(entry)} requires security scheme ${scheme}, which has no handler`)
    return handler
  }))
  return app.auth(alternatives)
}

// Fastify validates a body against the schema of its media type, so a request with no body
// and no Content-Type would meet no schema at all; the spec's `required: true` is kept here.
// This hook and the 404/405 one below take a callback: an async hook costs a promise per request.
function requireBody (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  done(request.body === undefined ? new SchemaViolationError('the request body is required') : undefined)
}

// A request no operation matches: on a path the spec declares it is a 405 naming the methods
// declared there, on any other path a 404. Both are decided in onRequest, before a body is
// read, for every method Node parses, even those Fastify cannot route (CONNECT included).
function answerUnroutedRequests (app: FastifyInstance, document: OpenApiDocument, basePath: string): void {
  const declaredPaths = Object.entries(document.paths).map(([path, pathItem]) => ({
    pattern: pathTemplatePattern(path, basePath),
    allowedMethods: httpMethods.filter((method) => pathItem[method] !== undefined).map((method) => method.toUpperCase()),
  }))
  const unrouted = (method: string, url: string): ApiError => {
    const path = routablePath(url)
    const declared = declaredPaths.find(({ pattern }) => pattern.test(path))
    return declared === undefined
      ? new NotFoundError(method, path)
      : new MethodNotAllowedError(method, declared.allowedMethods)
  }
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


// OpenAPI writes path parameters as {name}, Fastify as :name.
function toFastifyPath (openapiPath: string): string {
  return openapiPath.replace(/{(\w+)}/g, ':$1')
}

function describe ({ method, path, operation }: OperationEntry): string {
  return `${method.toUpperCase()} ${path} (${operation.operationId ?? 'no operationId'})`
}

// The hooks of http-protocol (the Host check) run before the 404/405 decision made here.
export default fp(openApiRoutes, {
  name: 'openapi-routes',
  fastify: '5.x',
  dependencies: ['error-responses', 'response-headers', 'http-protocol', 'json-body'],
})
