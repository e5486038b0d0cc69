import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import openapiGlue from 'fastify-openapi-glue'
import { markInt64Schemas } from '../int64/exact-int64-keyword.js'
import type { OperationRoute } from '../request-path.js'
import { withJsonResponsesOnly } from '../openapi/json-responses-only.js'
import { type LoadedOpenApiDocument, listOperations, type OperationEntry } from '../openapi/openapi-document.js'
import { markRequestBodyStrings } from '../openapi/storable-text.js'

export interface OpenApiRoutesOptions {
  readonly openApi: LoadedOpenApiDocument
  readonly basePath: string
  // An operation's route: its steps, its handler (src/request-path.ts).
  readonly routeOf: (entry: OperationEntry) => OperationRoute
}

// The spec, not code, decides which routes exist and how each is validated: fastify-openapi-glue
// builds a route per operation, with the validation schemas of its parameters and body, and the
// request path gives it the rest.
async function openApiRoutes (app: FastifyInstance, { openApi: { document }, basePath, routeOf }: OpenApiRoutesOptions): Promise<void> {
  const operations = listOperations(document)
  // Every request has these properties, so that requests keep one shape: its identity, set by
  // the authentication that accepts it, and whether its body is ignored (src/http/ignored-body.ts).
  app.decorateRequest('identity', null)
  app.decorateRequest('bodyIgnored', false)
  await app.register(openapiGlue, {
    specification: withJsonResponsesOnly(markRequestBodyStrings(markInt64Schemas(document))),
    prefix: basePath,
    operationResolver: (_operationId: string, method: string, openapiPath: string) => {
      const entry = operations.find((candidate) =>
        candidate.path === openapiPath && candidate.method === method.toLowerCase())
      // Without its spec entry a route's security is unknown: refuse to start rather than
      // serve it unprotected.
      if (entry === undefined) throw new Error(`fastify-openapi-glue asked for ${method} ${openapiPath}, which openapi.yaml does not declare`)
      return { method, url: toFastifyPath(openapiPath), ...routeOf(entry) }
    },
  })
}

// OpenAPI writes path parameters as {name}, Fastify as :name.
function toFastifyPath (openapiPath: string): string {
  return openapiPath.replace(/{(\w+)}/g, ':$1')
}

export default fp(openApiRoutes, {
  name: 'openapi-routes',
  fastify: '5.x',
  dependencies: ['error-responses', 'response-headers', 'http-protocol', 'json-body'],
})
