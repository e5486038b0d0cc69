import type { IncomingHttpHeaders } from 'node:http'
import type { FastifySchema } from 'fastify'
import { createApiTokenVerifier } from '../auth/api-token-verifier.js'
import { bearerTokenOf, notMine, type TokenVerifier } from '../auth/bearer-credentials.js'
import { ApiError, MalformedRequestError, SchemaViolationError } from '../errors/api-errors.js'
import { InvalidTokenError } from '../errors/credential-errors.js'
import { unreachable } from '../errors/unreachable.js'
import { readJsonBody } from '../http/read-json-body.js'
import { schemaViolation, type SchemaProblem } from '../http/to-api-error.js'
import { markInt64Schemas } from '../int64/exact-int64-keyword.js'
import {
  listOperations, type OpenApiDocument, type OperationEntry, pathTemplatePattern, resolveLocalRef,
} from '../openapi/openapi-document.js'
import { buildRequestValidator, exactValidationOptions } from '../openapi/request-validator.js'
import { markRequestBodyStrings } from '../openapi/storable-text.js'
import { unroutedRefusal } from '../plugins/unrouted-requests.js'

type Validate = ((data: unknown) => unknown) & { errors?: readonly SchemaProblem[] | null }

// The parts of a request Fastify validates, in the order it validates them: the first refusal is
// the answer.
const validatedParts = ['params', 'body', 'querystring', 'headers'] as const
type ValidatedPart = (typeof validatedParts)[number]

// Where each part's parameters are declared (`in`), for the parts that are parameters.
const parameterLocation = { params: 'path', querystring: 'query', headers: 'header' } as const
type ParameterPart = keyof typeof parameterLocation

interface Parameter {
  readonly name: string
  readonly in: string
  readonly required?: boolean
  readonly description?: string
  readonly schema?: object
  readonly example?: unknown
}

export interface MockRequest {
  readonly pathname: string
  readonly query: URLSearchParams
  readonly headers: IncomingHttpHeaders
  // The body as it was read; undefined for an operation that reads none.
  readonly body: Uint8Array | undefined
}

export interface CheckedOperation {
  readonly operationId: string | undefined
  // Whether the service reads the body of a request: not for an operation that declares none,
  // whose body it discards unread (src/http/ignored-body.ts).
  readonly readsBody: boolean
  // Why the service would refuse the request's credentials, before it reads its body, as the
  // ApiError it would answer.
  readonly refuseCredentials: (headers: IncomingHttpHeaders) => ApiError | undefined
  // Why the service would refuse the rest of the request.
  readonly refuseRequest: (request: MockRequest) => ApiError | undefined
  // The path to ask Prism for, once the request passed: each path parameter the spec gives an
  // example of is that example. Prism answers with the same examples whatever the parameters
  // are, but refuses some the service accepts (an int64 beyond 2^53, which it reads as a
  // float), with the 400's first example.
  readonly prismPath: (pathname: string) => string
}

export interface RequestCheck {
  // The operation a method and path call, or undefined when the spec declares none.
  readonly operationOf: (method: string, pathname: string) => CheckedOperation | undefined
  // The service's 404 or 405 for a request no operation matches.
  readonly refuseUnrouted: (method: string, url: string) => ApiError
}

export interface RequestCheckOptions {
  // The bearer tokens accepted, as the service's API_TOKENS; any other is refused as the service
  // refuses a token it does not know. Without them, any well-formed token is accepted.
  readonly tokens?: readonly string[]
}

// What the service refuses of a request, with its own code: the bearer header read by its
// authentication, the body by its JSON reader, the parameters and body by its validator, each
// failure by its messages. Prism cannot serve here: it waits for ever on a body that is not JSON,
// answers every refused request with the first example of its 400, and renders a declared header
// without an example as its schema's type (`WWW-Authenticate: string`).
export function createRequestCheck (document: OpenApiDocument, { tokens }: RequestCheckOptions = {}): RequestCheck {
  const marked = markRequestBodyStrings(markInt64Schemas(document))
  const compile = buildRequestValidator({}, exactValidationOptions)
  const verifier = tokens === undefined ? undefined : createApiTokenVerifier(tokens)
  const operations = listOperations(marked).map((entry) => ({
    method: entry.method,
    pattern: pathTemplatePattern(entry.path),
    checked: checkedOperation(marked, entry, compile, verifier),
  }))
  return {
    operationOf: (method, pathname) => operations.find((candidate) =>
      candidate.method === method.toLowerCase() && candidate.pattern.test(pathname))?.checked,
    refuseUnrouted: unroutedRefusal(document, ''),
  }
}

type Compile = ReturnType<typeof buildRequestValidator>

function checkedOperation (document: OpenApiDocument, entry: OperationEntry, compile: Compile, verifier: TokenVerifier | undefined): CheckedOperation {
  const { path, method, operation } = entry
  const validators = new Map<ValidatedPart, Validate>()
  for (const part of validatedParts) {
    const schema = schemaOf(document, entry, part)
    if (schema !== undefined) {
      validators.set(part, compile({ schema: schema as FastifySchema, method, url: path, httpPart: part }) as Validate)
    }
  }
  const requirements = operation.security ?? document.security ?? []
  const isPublic = requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0)
  const requiresBody = operation.requestBody?.required === true

  const refuseCredentials = (headers: IncomingHttpHeaders): ApiError | undefined => {
    if (isPublic) return undefined
    const token = bearerTokenOf(headers.authorization)
    if (token instanceof ApiError) return token
    if (verifier === undefined) return undefined
    // API_TOKENS' verifier answers at once: a promise is never its verdict.
    const verdict = verifier(token)
    if (verdict === notMine) return new InvalidTokenError()
    return verdict instanceof ApiError ? verdict : undefined
  }

  const refuseRequest = (request: MockRequest): ApiError | undefined => {
    try {
      const body = readBody(request)
      if (requiresBody && body === undefined) return SchemaViolationError.forMissingBody()
      const parts: Record<ValidatedPart, unknown> = {
        params: pathParameters(path, request.pathname),
        body,
        querystring: queryParameters(request.query),
        headers: { ...request.headers },
      }
      for (const part of validatedParts) {
        const validate = validators.get(part)
        // Fastify validates a body only against the schema of the media type it came as.
        if (validate === undefined || (part === 'body' && body === undefined)) continue
        if (validate(parts[part]) !== true) return schemaViolation(validate.errors ?? [], part, parts[part])
      }
      return undefined
    } catch (error) {
      if (error instanceof ApiError) return error
      throw error
    }
  }

  const examples = new Map(parametersIn(document, entry, 'params').flatMap(({ name, example }) =>
    example === undefined ? [] : [[name, encodeURIComponent(String(example))] as const]))
  const prismPath = (pathname: string): string => {
    const segments = pathname.split('/')
    return path.split('/').map((part, index) => examples.get(/^\{(\w+)\}$/.exec(part)?.[1] ?? '') ?? segments[index]).join('/')
  }

  return { operationId: operation.operationId, readsBody: operation.requestBody !== undefined, refuseCredentials, refuseRequest, prismPath }
}

// The body as Fastify hands it on: none when nothing is sent and nothing is typed, else parsed
// by the service's reader, which refuses a body of another type (415) or not strict JSON (400).
function readBody ({ headers, body }: MockRequest): unknown {
  if (body === undefined || (body.length === 0 && headers['content-type'] === undefined)) return undefined
  return readJsonBody(headers, body)
}

// A part's schema as fastify-openapi-glue hands it to the validator: the body's application/json
// schema, or the declared parameters of that part as the properties of an object (the
// operation's, else its path's), each with its own schema, the required ones required.
function schemaOf (document: OpenApiDocument, { path, operation }: OperationEntry, part: ValidatedPart): object | undefined {
  switch (part) {
    case 'body': {
      const schema = operation.requestBody?.content?.['application/json']?.schema
      return schema === undefined ? undefined : withRefsInlined(document, schema) as object
    }
    case 'params':
    case 'querystring':
    case 'headers': {
      const parameters = parametersIn(document, { path, operation }, part)
      if (parameters.length === 0) return undefined
      const required = parameters.filter((parameter) => parameter.required === true).map(({ name }) => name)
      return {
        type: 'object',
        properties: Object.fromEntries(parameters.map(({ name, schema, description }) =>
          [name, { ...schema, ...(description === undefined ? {} : { description }) }])),
        ...(required.length > 0 ? { required } : {}),
      }
    }
    default:
      return unreachable(part)
  }
}

// The parameters of a part: the operation's, else its path's (fastify-openapi-glue takes the
// path's only for a part the operation declares none of).
function parametersIn (document: OpenApiDocument, { path, operation }: Pick<OperationEntry, 'path' | 'operation'>, part: ParameterPart): Parameter[] {
  const declaredIn = (parameters: readonly unknown[] | undefined): Parameter[] =>
    (withRefsInlined(document, parameters ?? []) as Parameter[]).filter((parameter) => parameter.in === parameterLocation[part])
  const fromOperation = declaredIn(operation.parameters)
  const pathItem = document.paths[path] as { parameters?: readonly unknown[] } | undefined
  return fromOperation.length > 0 ? fromOperation : declaredIn(pathItem?.parameters)
}

// The path's parameters by name, decoded, as Fastify's router gives them: a segment that cannot
// be decoded is the URL the service cannot decode.
function pathParameters (template: string, pathname: string): Record<string, string> {
  const segments = pathname.split('/')
  const parameters: Record<string, string> = {}
  template.split('/').forEach((part, index) => {
    const name = /^\{(\w+)\}$/.exec(part)?.[1]
    if (name === undefined) return
    try {
      parameters[name] = decodeURIComponent(segments[index] ?? '')
    } catch {
      throw new MalformedRequestError('the URL cannot be decoded')
    }
  })
  return parameters
}

// The query as Fastify's parser gives it: a name sent once is its text, a name sent more than
// once the list of its texts.
function queryParameters (query: URLSearchParams): Record<string, string | string[]> {
  const parameters: Record<string, string | string[]> = {}
  for (const name of new Set(query.keys())) {
    const values = query.getAll(name)
    parameters[name] = values.length === 1 ? values[0]! : values
  }
  return parameters
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
