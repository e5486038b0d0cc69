// The stable values of `Error.error`. openapi.yaml's description is their one table (what each
// means, with its status), and test/error-codes.test.ts holds this list to it. The first three
// digits are the HTTP status; the last two tell that status's failures apart.
export const ErrorCode = {
  malformedJson: 40001,
  invalidText: 40002,
  schemaViolation: 40003,
  int64OutOfRange: 40004,
  malformedCredentials: 40006,
  malformedRequest: 40007,
  webhookUrlRefused: 40008,
  unknownWebhookEvent: 40009,
  missingCredentials: 40101,
  invalidToken: 40102,
  insufficientScope: 40301,
  notFound: 40401,
  methodNotAllowed: 40501,
  requestTimeout: 40801,
  conflict: 40901,
  preconditionFailed: 41201,
  contentTooLarge: 41301,
  unsupportedMediaType: 41501,
  tooManyRequestsForCredential: 42901,
  tooManyRequestsFromAddress: 42902,
  tooManyFailedAuthentications: 42903,
  headerFieldsTooLarge: 43101,
  internal: 50001,
  storeUnavailable: 50301,
  identityProviderUnavailable: 50302,
} as const

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]

// Every failure the service answers is one of these; the error handler turns it into the
// spec's Error body, its status and its headers. Anything else becomes an InternalError.
//
// An ApiError is an answer, not a fault: its code says where it came from, and its stack trace
// is never shown or logged (a fault's own error, logged with a 5xx, keeps its trace). So none is
// captured: capturing one was most of the cost of refusing a request, which a flood of bad
// tokens or pipelined requests makes the service do tens of thousands of times.
// Its Status type is the HTTP status its code names, so that a handler's answers can be checked
// against the statuses its operation declares (src/handlers/typed-handler.ts).
export class ApiError<Status extends number = number> extends Error {
  readonly statusCode: Status

  constructor (
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {}
  ) {
    super(withoutStackTrace(message))
    Error.stackTraceLimit = stackTraceLimit
    this.name = new.target.name
    this.statusCode = statusOf(code) as Status
  }
}

let stackTraceLimit = Error.stackTraceLimit

// Runs as super()'s argument is evaluated, just before Error's constructor captures the trace;
// the constructor puts the limit back just after.
function withoutStackTrace (message: string): string {
  stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  return message
}

export function statusOf (code: ErrorCode): number {
  return Math.floor(code / 100)
}

export class MalformedJsonError extends ApiError<400> {
  constructor (message: string) {
    super(ErrorCode.malformedJson, message)
  }
}

export class InvalidTextError extends ApiError<400> {
  constructor (message: string) {
    super(ErrorCode.invalidText, message)
  }
}

export class SchemaViolationError extends ApiError<400> {
  constructor (message: string) {
    super(ErrorCode.schemaViolation, message)
  }

  // No body, where the operation's requestBody is `required: true`.
  static forMissingBody (): SchemaViolationError {
    return new SchemaViolationError('the request body is required')
  }
}

export class Int64OutOfRangeError extends ApiError<400> {
  constructor (field: string) {
    super(ErrorCode.int64OutOfRange,
      `${field} must be an integer from -9223372036854775808 to 9223372036854775807`)
  }
}

export class MalformedRequestError extends ApiError<400> {
  constructor (message: string) {
    super(ErrorCode.malformedRequest, message)
  }
}

// A webhook endpoint's URL the service will not send to (src/endpoint-urls/endpoint-url-policy.ts).
export class WebhookUrlRefusedError extends ApiError<400> {
  constructor (reason: string) {
    super(ErrorCode.webhookUrlRefused, `body.url is refused: ${reason}`)
  }
}

export class UnknownWebhookEventError extends ApiError<400> {
  constructor (unknown: readonly string[], declared: readonly string[]) {
    const which = unknown.length === 1 ? 'which is not a webhook' : 'which are not webhooks'
    super(ErrorCode.unknownWebhookEvent, `body.events names ${unknown.join(', ')}, ${which} of this service (${declared.join(', ')})`)
  }
}

// No route, or no resource (a plant, a file) where the route is.
export class NotFoundError extends ApiError<404> {
  constructor (message: string) {
    super(ErrorCode.notFound, message)
  }

  static forRoute (method: string, path: string): NotFoundError {
    return new NotFoundError(`no route for ${method} ${path}`)
  }
}

export class MethodNotAllowedError extends ApiError<405> {
  constructor (method: string, allowedMethods: readonly string[]) {
    super(ErrorCode.methodNotAllowed, `${method} is not allowed here; use ${allowedMethods.join(', ')}`,
      { allow: allowedMethods.join(', ') })
  }
}

export class ContentTooLargeError extends ApiError<413> {
  constructor (limitInBytes: number) {
    super(ErrorCode.contentTooLarge, `the body is larger than ${limitInBytes} bytes`)
  }
}

export class UnsupportedMediaTypeError extends ApiError<415> {
  constructor (message: string) {
    super(ErrorCode.unsupportedMediaType, message)
  }

  static forContentType (contentType: string | undefined): UnsupportedMediaTypeError {
    return new UnsupportedMediaTypeError(
      `the body must be application/json (charset utf-8), not ${contentType === undefined ? 'untyped' : JSON.stringify(contentType)}`)
  }
}

export type RateLimitCode =
  | typeof ErrorCode.tooManyRequestsForCredential
  | typeof ErrorCode.tooManyRequestsFromAddress
  | typeof ErrorCode.tooManyFailedAuthentications

export interface RateLimitState {
  // The policy's name in the RateLimit fields.
  readonly policy: string
  // Requests (or failed authentications) allowed in one window.
  readonly quota: number
  readonly windowSeconds: number
  readonly secondsUntilReset: number
}

// A rate limit refused the request, before its body was read. The fields follow
// draft-ietf-httpapi-ratelimit-headers (its latest draft, -10): RateLimit-Policy names the
// policy with its quota (q) and window in seconds (w); RateLimit says what is left of it (r,
// nothing) and the seconds until it is restored (t). Retry-After names the same moment, which
// the draft asks it not to put before t.
export class TooManyRequestsError extends ApiError<429> {
  // The policy that refused, for the metrics.
  readonly policy: string

  constructor (code: RateLimitCode, exceeded: string, { policy, quota, windowSeconds, secondsUntilReset }: RateLimitState) {
    super(code,
      `${exceeded} (its limit is ${quota} per ${windowSeconds} seconds); ` +
      `retry after ${secondsUntilReset} ${secondsUntilReset === 1 ? 'second' : 'seconds'}`, {
        'retry-after': String(secondsUntilReset),
        ratelimit: `"${policy}";r=0;t=${secondsUntilReset}`,
        'ratelimit-policy': `"${policy}";q=${quota};w=${windowSeconds}`,
      })
    this.policy = policy
  }
}

export class RequestTimeoutError extends ApiError<408> {
  constructor () {
    super(ErrorCode.requestTimeout, 'the request was not received in full in time')
  }
}

export class HeaderFieldsTooLargeError extends ApiError<431> {
  constructor () {
    super(ErrorCode.headerFieldsTooLarge, 'the request header fields are too large')
  }
}

export class InternalError extends ApiError<500> {
  constructor () {
    super(ErrorCode.internal, 'internal server error')
  }
}

export class ConflictResponseError extends ApiError<409> {
  constructor (message: string) {
    super(ErrorCode.conflict, message)
  }
}

// An If-Match the plant does not meet: it changed (or was deleted and created again) since the
// caller read the entity tag it sent, or the header names no entity tag at all.
export class PreconditionFailedError extends ApiError<412> {
  constructor (id: bigint, ifMatchNamesEntityTags: boolean) {
    super(ErrorCode.preconditionFailed, ifMatchNamesEntityTags
      ? `the plant with id ${id} does not match If-Match: it changed since that entity tag was read`
      : `the plant with id ${id} does not match If-Match: it names no entity tag (a tag is quoted, as ETag sends it)`)
  }
}

export class ServiceUnavailableError extends ApiError<503> {
  constructor (message: string, retryAfterSeconds: number) {
    super(ErrorCode.storeUnavailable, message, { 'retry-after': String(retryAfterSeconds) })
  }
}
