import type { operations } from '../../generated/openapi.js'
import { type ApiReferenceFile, apiReferencePage } from '../api-reference/api-reference-files.js'
import { NotFoundError } from '../errors/api-errors.js'
import { type OperationHandler, redirect } from './typed-handler.js'

// The page runs only what the service itself serves. Swagger UI sets inline styles and shows
// data: images; "Try it out" sends a pasted token to this service, the one server the page
// offers, and nowhere else.
const pageSecurityPolicy = [
  "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
  "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'",
].join('; ')

export function getApiReferenceHandler (): OperationHandler<operations['getApiReference']> {
  return async function getApiReference (request, reply) {
    reply.type('text/html; charset=utf-8').header('content-security-policy', pageSecurityPolicy)
    return apiReferencePage
  }
}

// The root sends a browser to the reference, beside it: the route's own URL is `${BASE_PATH}/`
// or `${BASE_PATH}` (under a prefix Fastify routes the root both ways). A 302, not a 308: a
// browser does not keep a temporary redirect for good, so the root may answer otherwise one day.
export function getRootHandler (): OperationHandler<operations['getRoot']> {
  return async function getRoot (request, reply) {
    const root = request.routeOptions.url ?? '/'
    return redirect(reply, `${root.replace(/\/$/, '')}/docs`, 302)
  }
}

export function getApiReferenceAssetHandler (
  files: ReadonlyMap<string, ApiReferenceFile>
): OperationHandler<operations['getApiReferenceAsset']> {
  return async function getApiReferenceAsset (request, reply) {
    const file = files.get(request.params.asset)
    if (file === undefined) return NotFoundError.forRoute(request.method, request.url.split('?')[0] ?? request.url)
    // The files change only with the installed package, that is with a new release.
    reply.type(file.contentType).header('cache-control', 'public, max-age=3600')
    return file.body
  }
}
