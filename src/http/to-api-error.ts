import type { FastifyRequest } from 'fastify'
import {
  ApiError, ContentTooLargeError, Int64OutOfRangeError, InternalError, InvalidTextError,
  MalformedRequestError, SchemaViolationError, ServiceUnavailableError, UnsupportedMediaTypeError,
} from '../errors/api-errors.js'
import { exactInt64Keyword } from '../int64/exact-int64-keyword.js'
import { storableTextKeyword } from '../openapi/storable-text.js'
import { StoreUnavailableError } from '../store/store-errors.js'
import { endpointBodyRefusal } from '../endpoint-urls/endpoint-body-refusal.js'

export interface SchemaProblem {
  keyword: string
  instancePath: string
  message?: string
  params: Record<string, unknown>
}

interface FrameworkError {
  code?: string
  statusCode?: number
  validation?: SchemaProblem[]
  validationContext?: string
}

// The one place where a failure thrown on a request's path becomes a status, a code and a message
// that openapi.yaml declares: the ApiErrors of the path and the handlers, the store's
// unavailability, and what Fastify and Node blame on the request. What is not recognised here is
// an internal error.
export function toApiError (error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof StoreUnavailableError) return new ServiceUnavailableError(error.message, error.retryAfterSeconds)

  const { code, statusCode, validation, validationContext = 'request' } = (error ?? {}) as FrameworkError
  if (validation !== undefined) return schemaViolation(validation, validationContext, validationContext === 'body' ? request.body : undefined)
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return new ContentTooLargeError(request.routeOptions.bodyLimit)
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': return UnsupportedMediaTypeError.forContentType(request.headers['content-type'])
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH': return new MalformedRequestError('the body does not match its Content-Length')
    case 'FST_ERR_BAD_URL': return new MalformedRequestError('the URL cannot be decoded')
  }
  // Anything else Fastify or Node blames on the request (a client that hung up mid-body, for
  // one) is the request's fault, not an internal error; its own message is not passed on.
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
    return new MalformedRequestError('the HTTP request is malformed')
  }
  return new InternalError()
}

// The first problem the validator found, as the answer the spec declares for it; `data` is what
// was validated, for the messages that quote a value. The mock (src/mock/) answers the bodies it
// checks with it too.
export function schemaViolation (problems: readonly SchemaProblem[], context: string, data?: unknown): ApiError {
  const [problem] = problems
  if (problem === undefined) return new SchemaViolationError(`${context} does not match the schema`)
  const field = context + problem.instancePath.replaceAll('/', '.')
  if (problem.keyword === exactInt64Keyword && problem.params.problem === 'out-of-range') return new Int64OutOfRangeError(field)
  if (problem.keyword === storableTextKeyword) return new InvalidTextError(`${field} ${problem.message ?? 'is not text'}`)
  if (problem.keyword === 'required') return new SchemaViolationError(`${field}.${String(problem.params.missingProperty)} is required`)
  const endpointRefusal = context === 'body' ? endpointBodyRefusal(problem, data) : undefined
  if (endpointRefusal !== undefined) return endpointRefusal
  if (problem.keyword === 'enum') {
    return new SchemaViolationError(`${field} must be one of ${(problem.params.allowedValues as unknown[]).map(String).join(', ')}`)
  }
  return new SchemaViolationError(`${field} ${problem.message ?? 'does not match the schema'}`)
}
