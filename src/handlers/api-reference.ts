import type { operations } from '../../generated/openapi.js'
import { type ApiReferenceFile, apiReferencePage } from '../api-reference/api-reference-files.js'
import { NotFoundError } from '../errors/api-errors.js'
import type { LoadedOpenApiDocument } from '../spec/openapi-document.js'
import type { OperationHandler } from './operation-handler.js'

// The page runs only what the service itself serves. Swagger UI sets inline styles and shows
// data: images; "Try it out" may send a pasted token to this service and to the servers the
// spec lists, and nowhere else.
function pageSecurityPolicy ({ document }: LoadedOpenApiDocument): string {
  const servers = (document.servers ?? []) as ReadonlyArray<{ url?: unknown }>
  const serverOrigins = servers.flatMap(({ url }) =>
    typeof url === 'string' && /^https?:\/\//.test(url) ? [new URL(url).origin] : [])
  return [
    "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
    ["connect-src 'self'", ...new Set(serverOrigins)].join(' '),
    "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'",
  ].join('; ')
}

export function getApiReferenceHandler (openApi: LoadedOpenApiDocument): OperationHandler<operations['getApiReference']> {
  const securityPolicy = pageSecurityPolicy(openApi)
  return async function getApiReference (request, reply) {
    reply.type('text/html; charset=utf-8').header('content-security-policy', securityPolicy)
    return apiReferencePage
  }
}

export function getApiReferenceAssetHandler (
  files: ReadonlyMap<string, ApiReferenceFile>
): OperationHandler<operations['getApiReferenceAsset']> {
  return async function getApiReferenceAsset (request, reply) {
    const file = files.get(request.params.asset)
    if (file === undefined) throw NotFoundError.forRoute(request.method, request.url.split('?')[0] ?? request.url)
    // The files change only with the installed package, that is with a new release.
    reply.type(file.contentType).header('cache-control', 'public, max-age=3600')
    return file.body
  }
}
