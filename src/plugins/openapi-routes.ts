import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteHandlerMethod } from 'fastify'
import fp from 'fastify-plugin'
import openapiGlue from 'fastify-openapi-glue'
import type { SecurityHandler } from '../auth/token-verifier.js'
import { authenticationHook } from '../auth/operation-security.js'
import { SchemaViolationError } from '../errors/api-errors.js'
import { markInt64Schemas } from '../int64/exact-int64-keyword.js'
import type { RateLimits } from '../rate-limit/rate-limits.js'
import { describeOperation, listOperations, type LoadedOpenApiDocument } from '../spec/openapi-document.js'
import { withJsonResponsesOnly } from '../spec/json-responses-only.js'
import { markRequestBodyStrings } from '../spec/storable-text.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    // The operation a route serves, for the metrics and traces (src/plugins/metrics.ts,
    // src/tracing/tracing.ts); unrouted requests have none.
    operationId?: string
  }
}

export interface OpenApiRoutesOptions {
  readonly openApi: LoadedOpenApiDocument
  // Keyed by operationId.
  readonly handlers: Readonly<Record<string, unknown>>
  // Keyed by the names of components.securitySchemes.
  readonly securityHandlers: Readonly<Record<string, SecurityHandler>>
  readonly rateLimits: RateLimits
  readonly basePath: string
}

// The spec, not code, decides which routes exist, how each is validated and which are
// protected: fastify-openapi-glue builds a route per operation, and each route's security
// requirements become an onRequest hook, so credentials are checked before the body is read.
// The rate limits are onRequest hooks too, on either side of it: per credential on a protected
// operation, per client address on a public one.
async function openApiRoutes (app: FastifyInstance, options: OpenApiRoutesOptions): Promise<void> {
  const { openApi: { document }, handlers, basePath } = options
  const operations = listOperations(document)
  const missing = operations.filter(({ operation: { operationId } }) =>
    operationId === undefined || !Object.hasOwn(handlers, operationId))
  if (missing.length > 0) {
    throw new Error(`openapi.yaml declares operations with no handler: ${missing.map(describeOperation).join(', ')}`)
  }

  // Every request has the property, set by the security handler that accepts it, so that
  // requests keep one shape.
  app.decorateRequest('identity', null)
  await app.register(openapiGlue, {
    specification: withJsonResponsesOnly(markRequestBodyStrings(markInt64Schemas(document))),
    prefix: basePath,
    operationResolver: (operationId: string, method: string, openapiPath: string) => {
      const entry = operations.find((candidate) =>
        candidate.path === openapiPath && candidate.method === method.toLowerCase())
      // Without its spec entry a route's security is unknown: refuse to start rather than
      // serve it unprotected.
      if (entry === undefined) throw new Error(`fastify-openapi-glue asked for ${method} ${openapiPath}, which openapi.yaml does not declare`)
      const authenticate = authenticationHook(app, document, entry, options.securityHandlers)
      const onRequest = authenticate === undefined
        ? options.rateLimits.forPublicOperation(operationId)
        : options.rateLimits.forProtectedOperation(authenticate)
      return {
        method,
        url: toFastifyPath(openapiPath),
        handler: handlers[operationId] as RouteHandlerMethod,
        config: { operationId },
        ...(onRequest.length === 0 ? {} : { onRequest }),
        ...(entry.operation.requestBody?.required === true ? { preValidation: requireBody } : {}),
      }
    },
  })
}

// Fastify validates a body against the schema of its media type, so a request with no body
// and no Content-Type would meet no schema at all; the spec's `required: true` is kept here.
// The hook takes a callback: an async hook costs a promise per request.
function requireBody (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  done(request.body === undefined ? new SchemaViolationError('the request body is required') : undefined)
}

// OpenAPI writes path parameters as {name}, Fastify as :name.
function toFastifyPath (openapiPath: string): string {
  return openapiPath.replace(/{(\w+)}/g, ':$1')
}

export default fp(openApiRoutes, {
  name: 'openapi-routes',
  fastify: '5.x',
  dependencies: ['error-responses', 'response-headers', 'http-protocol', 'json-body', '@fastify/auth'],
})
