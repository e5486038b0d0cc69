import { type ApiError } from '../errors/api-errors.js'
import { MalformedCredentialsError, MissingCredentialsError } from '../errors/credential-errors.js'
import { token68 } from '../config/token68.js'

// The token of an `Authorization: Bearer <token>` header (RFC 6750 section 2.1), or why there is
// none: no header or another scheme is missing credentials (401), a header with the Bearer
// scheme but no single token68 after it is malformed (400). Only this header is read: tokens in
// the query string or the body are ignored, as they would end up in logs and caches.
export function bearerTokenOf (authorization: string | undefined): string | ApiError {
  const [scheme = '', ...rest] = (authorization?.trim() ?? '').split(/\s+/)
  if (scheme.toLowerCase() !== 'bearer') return new MissingCredentialsError()
  const [token] = rest
  if (token === undefined || rest.length > 1 || !token68.test(token)) return new MalformedCredentialsError()
  return token
}
