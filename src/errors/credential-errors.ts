import { ApiError, ErrorCode } from './api-errors.js'

// The refusals of a request's credentials, as RFC 6750 words them: the body's Error and the
// WWW-Authenticate challenge say the same.

const challenge = 'Bearer realm="plant-store"'

export class MalformedCredentialsError extends ApiError<400> {
  constructor () {
    super(ErrorCode.malformedCredentials,
      'the Authorization header must be "Bearer <token>"',
      { 'www-authenticate': `${challenge}, error="invalid_request"` })
  }
}

export class MissingCredentialsError extends ApiError<401> {
  constructor () {
    super(ErrorCode.missingCredentials, 'bearer credentials are required',
      { 'www-authenticate': challenge })
  }
}

// A token the service does not know gets the bare challenge; one it knows to be unusable
// (expired, revoked, badly signed, for another audience, mistyped) gets a description saying why,
// in the body and in the challenge's error_description (RFC 6750 section 3). A description must
// not hold a double quote or a backslash, and never holds any part of the token.
export class InvalidTokenError extends ApiError<401> {
  constructor (description?: string) {
    super(ErrorCode.invalidToken, description ?? 'the bearer token is not valid', {
      'www-authenticate': description === undefined
        ? `${challenge}, error="invalid_token"`
        : `${challenge}, error="invalid_token", error_description="${description}"`,
    })
  }
}

// The token is valid, but the operation's security requirement names a role it does not hold
// (RFC 6750 section 3.1): `scope` lists every role the operation needs.
export class InsufficientScopeError extends ApiError<403> {
  constructor (requiredRoles: readonly string[]) {
    super(ErrorCode.insufficientScope, `the token lacks a role this operation needs: ${requiredRoles.join(' ')}`, {
      'www-authenticate': `${challenge}, error="insufficient_scope", scope="${requiredRoles.join(' ')}"`,
    })
  }
}

// The identity provider's signing keys (JWT_JWKS_URL) could not be fetched: only a JWT caller
// gets this, and may retry; a JWT is never accepted without its key.
export class IdentityProviderUnavailableError extends ApiError<503> {
  constructor (retryAfterSeconds: number) {
    super(ErrorCode.identityProviderUnavailable,
      "the identity provider's signing keys could not be fetched; retry later",
      { 'retry-after': String(retryAfterSeconds) })
  }
}
