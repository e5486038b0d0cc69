import type { IncomingHttpHeaders } from 'node:http'
import type { FastifySchema } from 'fastify'
import { ApiError } from '../errors/api-errors.js'
import { schemaViolation, type SchemaProblem } from '../http/to-api-error.js'
import { markInt64Schemas } from '../int64/exact-int64-keyword.js'
import { readJsonBody } from '../http/read-json-body.js'
import { listOperations, type OpenApiDocument, pathTemplatePattern, resolveLocalRef } from '../openapi/openapi-document.js'
import { buildRequestValidator, exactValidationOptions } from '../openapi/request-validator.js'
import { markRequestBodyStrings } from '../openapi/storable-text.js'

type Validate = ((body: unknown) => unknown) & { errors?: readonly SchemaProblem[] | null }

interface BodyOperation {
  readonly method: string
  readonly pattern: RegExp
  readonly validate: Validate
}

export interface RequestBodyCheck {
  // Whether the service reads the body of a request: not for an operation that declares none,
  // whose body it discards unread (src/http/ignored-body.ts).
  readonly readsBody: (method: string, path: string) => boolean
  // Why the service would refuse the body it read, as the ApiError it would answer, or undefined.
  readonly check: (method: string, path: string, headers: IncomingHttpHeaders, body: Uint8Array) => ApiError | undefined
}

// Which bodies the service reads, and why it would refuse one. Prism cannot serve here: it waits for ever on a body that is not JSON,
// and answers every invalid body with the first example of the 400 response. So the mock reads
// each body the spec declares with the service's own reader, validator and messages.
export function createRequestBodyCheck (document: OpenApiDocument): RequestBodyCheck {
  const marked = markRequestBodyStrings(markInt64Schemas(document))
  const compile = buildRequestValidator({}, exactValidationOptions)
  const bodiless = listOperations(marked).filter(({ operation }) => operation.requestBody === undefined)
    .map(({ path, method }) => ({ method, pattern: pathTemplatePattern(path) }))
  const operations: BodyOperation[] = listOperations(marked).flatMap(({ path, method, operation }) => {
    const schema = operation.requestBody?.content?.['application/json']?.schema
    if (schema === undefined) return []
    const validate = compile({ schema: withRefsInlined(marked, schema) as FastifySchema, method, url: path, httpPart: 'body' }) as Validate
    return [{ method, pattern: pathTemplatePattern(path), validate }]
  })

  const readsBody = (method: string, path: string): boolean =>
    !bodiless.some((candidate) => candidate.method === method.toLowerCase() && candidate.pattern.test(path))
  const check = (method: string, path: string, headers: IncomingHttpHeaders, body: Uint8Array): ApiError | undefined => {
    const operation = operations.find((candidate) => candidate.method === method.toLowerCase() && candidate.pattern.test(path))
    // No body to check, or one the service would not read either: Prism answers those.
    if (operation === undefined || body.length === 0) return undefined
    try {
      if (operation.validate(readJsonBody(headers, body)) === true) return undefined
      return schemaViolation(operation.validate.errors ?? [], 'body')
    } catch (error) {
      if (error instanceof ApiError) return error
      throw error
    }
  }
  return { readsBody, check }
}

// The schema with every local $ref replaced by what it names, as fastify-openapi-glue hands it
// to the validator. The spec's schemas are not recursive.
function withRefsInlined (document: object, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((item) => withRefsInlined(document, item))
  if (typeof node !== 'object' || node === null) return node
  const { $ref } = node as { $ref?: unknown }
  if (typeof $ref === 'string') return withRefsInlined(document, resolveLocalRef(document, $ref))
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withRefsInlined(document, value)]))
}
