import { ErrorCode } from './error-codes.js'

// Every failure the service answers is one of these; the error handler turns it into the
// spec's Error body, its status and its headers. Anything else becomes an InternalError.
export class ApiError extends Error {
  constructor (
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message)
    this.name = new.target.name
  }
}

export class MalformedJsonError extends ApiError {
  constructor (message: string) {
    super(400, ErrorCode.malformedJson, message)
  }
}

export class InvalidTextError extends ApiError {
  constructor (message: string) {
    super(400, ErrorCode.invalidText, message)
  }
}

export class SchemaViolationError extends ApiError {
  constructor (message: string) {
    super(400, ErrorCode.schemaViolation, message)
  }
}

export class Int64OutOfRangeError extends ApiError {
  constructor (field: string) {
    super(400, ErrorCode.int64OutOfRange,
      `${field} must be an integer from -9223372036854775808 to 9223372036854775807`)
  }
}

export class ForbiddenKeyError extends ApiError {
  constructor (path: string) {
    super(400, ErrorCode.forbiddenKey, `${path} is not an allowed property name`)
  }
}

export class MalformedRequestError extends ApiError {
  constructor (message: string) {
    super(400, ErrorCode.malformedRequest, message)
  }
}

const challenge = 'Bearer realm="plant-store"'

export class MalformedCredentialsError extends ApiError {
  constructor () {
    super(400, ErrorCode.malformedCredentials,
      'the Authorization header must be "Bearer <token>"',
      { 'www-authenticate': `${challenge}, error="invalid_request"` })
  }
}

export class MissingCredentialsError extends ApiError {
  constructor () {
    super(401, ErrorCode.missingCredentials, 'bearer credentials are required',
      { 'www-authenticate': challenge })
  }
}

export class InvalidTokenError extends ApiError {
  constructor () {
    super(401, ErrorCode.invalidToken, 'the bearer token is not valid',
      { 'www-authenticate': `${challenge}, error="invalid_token"` })
  }
}

export class NotFoundError extends ApiError {
  constructor (method: string, path: string) {
    super(404, ErrorCode.notFound, `no route for ${method} ${path}`)
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor (method: string, allowedMethods: readonly string[]) {
    super(405, ErrorCode.methodNotAllowed, `${method} is not allowed here; use ${allowedMethods.join(', ')}`,
      { allow: allowedMethods.join(', ') })
  }
}

export class ContentTooLargeError extends ApiError {
  constructor (limitInBytes: number) {
    super(413, ErrorCode.contentTooLarge, `the body is larger than ${limitInBytes} bytes`)
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  constructor (message: string) {
    super(415, ErrorCode.unsupportedMediaType, message)
  }

  static forContentType (contentType: string | undefined): UnsupportedMediaTypeError {
    return new UnsupportedMediaTypeError(
      `the body must be application/json (charset utf-8), not ${contentType === undefined ? 'untyped' : JSON.stringify(contentType)}`)
  }
}

export class RequestTimeoutError extends ApiError {
  constructor () {
    super(408, ErrorCode.requestTimeout, 'the request was not received in full in time')
  }
}

export class HeaderFieldsTooLargeError extends ApiError {
  constructor () {
    super(431, ErrorCode.headerFieldsTooLarge, 'the request header fields are too large')
  }
}

export class InternalError extends ApiError {
  constructor () {
    super(500, ErrorCode.internal, 'internal server error')
  }
}

export class ConflictResponseError extends ApiError {
  constructor (message: string) {
    super(409, ErrorCode.conflict, message)
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor (message: string, retryAfterSeconds: number) {
    super(503, ErrorCode.storeUnavailable, message, { 'retry-after': String(retryAfterSeconds) })
  }
}
