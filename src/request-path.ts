import type {
  FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler, RouteHandlerMethod,
} from 'fastify'
import type { Credentials } from './auth/credentials.js'
import { type ComposeAuth, type OperationAuthenticator, operationAuthenticator } from './auth/operation-authenticator.js'
import { SchemaViolationError } from './errors/api-errors.js'
import { requestKinds } from './handlers/operation-handlers.js'
import type { ActiveWriters } from './http/active-writers.js'
import { ignoreBody } from './http/ignored-body.js'
import { type RequestKind, requestTurn } from './http/request-turns.js'
import type { Observability } from './observability/observability.js'
import { type RateLimits, unlimitedOperations } from './rate-limit/rate-limits.js'
import { describeOperation, listOperations, type OpenApiDocument, type OperationEntry, securityOf } from './openapi/openapi-document.js'
import { compileRequestDecoder } from './openapi/request-decoder.js'

// Everything a request meets, in order. Node and Fastify run the first and the last parts for
// every request; the middle is built here, per operation, from openapi.yaml.
//
//  1. The connection guard: connections and unanswered requests bounded, a request that
//     cannot be parsed answered with an Error (src/http/connection-guard.ts,
//     src/http/client-error-response.ts, counted as "unparsed" by the metrics).
//  2. Routing, and its request id (the caller's X-Request-Id when sane).
//  3. The request span, named after the operation (src/observability/tracing.ts; traces on).
//  4. The Host header is required, and it, Authorization and Content-Type come once at most
//     (src/plugins/http-protocol.ts); a request no operation matches is a 404 or 405
//     (src/plugins/unrouted-requests.ts).
//  5. The operation's steps, before its body is read: `stepsOf` below.
//  6. `100 Continue` once they pass; the body read as strict JSON, or a 413 or 415
//     (src/plugins/json-body.ts, src/http/read-json-body.ts). An operation that declares no body
//     reads none, whatever is sent (src/http/ignored-body.ts).
//  7. A body the spec requires must be there (`requireBody`); the body and parameters validated
//     against the spec (src/openapi/request-validator.ts, exact int64, storable text).
//  8. int64 parameters and body fields decoded to bigints (src/openapi/request-decoder.ts), then the
//     operation's handler (src/handlers/), typed from the spec: its 200, or a refusal its
//     operation declares.
//  9. Every failure becomes the spec's Error body (src/http/error-response.ts); store errors and
//     rate-limit refusals are counted, and a failed request's span marked (src/plugins/request-observability.ts).
// 10. Common headers (nosniff, the request id: src/plugins/response-headers.ts).
// 11. Once answered: one access line, and the request counted and timed by operation and status
//     (src/http/request-log.ts, src/observability/observability.ts).

declare module 'fastify' {
  interface FastifyContextConfig {
    // The operation a route serves: the request span and the request metrics are named after it.
    // Unrouted requests have none.
    operationId?: string
  }
}

export interface RequestPathParts {
  readonly document: OpenApiDocument
  // Keyed by operationId.
  readonly handlers: Readonly<Record<string, unknown>>
  readonly credentials: Credentials
  // @fastify/auth's app.auth, which composes each operation's security requirements.
  readonly auth: ComposeAuth
  readonly limits: RateLimits
  readonly observability: Observability
  // The connections that wrote lately, whose next writes the store's batches wait a moment for.
  readonly writers: ActiveWriters
}

// The part of an operation's route the request path decides.
export interface OperationRoute {
  readonly onRequest?: onRequestHookHandler[]
  readonly preValidation?: typeof requireBody
  readonly handler: RouteHandlerMethod
  readonly config: { readonly operationId: string }
}

export function createRequestPath ({ document, handlers, credentials, auth, limits, observability, writers }: RequestPathParts): (entry: OperationEntry) => OperationRoute {
  const missing = listOperations(document).filter(({ operation: { operationId } }) =>
    operationId === undefined || !Object.hasOwn(handlers, operationId))
  if (missing.length > 0) {
    throw new Error(`openapi.yaml declares operations with no handler: ${missing.map(describeOperation).join(', ')}`)
  }

  // Authentication as a step: a refusal of the credentials counts against the client's address,
  // and with traces on the step is a span of its own.
  const authentication = ({ authenticate, schemeNames }: OperationAuthenticator): onRequestHookHandler =>
    observability.traceAuthentication(schemeNames, function authenticateRequest (request, reply, decided) {
      authenticate(request, reply, (failure) => {
        if (failure === undefined || failure === null) {
          decided()
          return
        }
        limits.countFailedAuthentication(request, failure)
        decided(failure)
      })
    })

  // The steps before the body is read, in order, with the statuses they may answer.
  const stepsOf = (entry: OperationEntry, operationId: string): onRequestHookHandler[] => {
    const name = describeOperation(entry)
    const consumer = operationAuthenticator(securityOf(document, entry.operation), credentials.schemes, name, auth)
    if (consumer !== undefined) {
      requireDeclared(entry, [400, 401, ...(consumer.checksRoles ? [403] : []), 429, 503], 'its security requirements')
      return [
        limits.refuseFailingAddress, // 429: too many failed authentications from this address
        authentication(consumer), //    400, 401, 403 (a role missing), 503 (the store or the identity provider down)
        limits.limitCredential, //      429: too many requests with this credential
      ]
    }
    const steps: onRequestHookHandler[] = []
    if (!unlimitedOperations.has(operationId)) {
      requireDeclared(entry, [429], 'a public operation, limited per client address')
      steps.push(limits.limitAddress) // 429: too many requests from this address
    }
    const operator = operatorAuthenticator(entry)
    if (operator !== undefined) {
      requireDeclared(entry, [400, 401, 429], `its x-operator-token, ${entry.operation['x-operator-token']}`)
      steps.push(limits.refuseFailingAddress, authentication(operator))
    }
    return steps
  }

  // An operation with `x-operator-token: <setting>` (/metrics: METRICS_TOKEN) is public in the
  // spec, as a consumer's client must not hold the operator's token; once the setting is set,
  // that token is required.
  const operatorAuthenticator = (entry: OperationEntry): OperationAuthenticator | undefined => {
    const setting = entry.operation['x-operator-token']
    if (setting === undefined) return undefined
    if (typeof setting !== 'string' || !Object.hasOwn(credentials.operatorTokens, setting)) {
      throw new Error(`${describeOperation(entry)} names x-operator-token ${String(setting)}, which is not a token setting of this service`)
    }
    const token = credentials.operatorTokens[setting]
    return token === undefined ? undefined : { authenticate: token.holding([]), schemeNames: setting, checksRoles: false }
  }

  return (entry) => {
    const operationId = entry.operation.operationId ?? ''
    requireDeclared(entry, [400, 408, 431, 500], 'any request (a malformed request, one not received in time, header fields too large, an internal failure)')
    if (entry.operation.requestBody !== undefined) requireDeclared(entry, [413, 415], 'its request body (too large, not JSON)')
    const onRequest = stepsOf(entry, operationId)
    if (entry.operation.requestBody === undefined) onRequest.push(ignoreBody)
    const handle = handlers[operationId] as RouteHandlerMethod
    const decode = compileRequestDecoder(document, entry)
    return {
      ...(onRequest.length === 0 ? {} : { onRequest }),
      ...(entry.operation.requestBody?.required === true ? { preValidation: requireBody } : {}),
      handler: inTurn(kindOf(operationId), writers, decode === undefined
        ? handle
        : function decodedThenHandled (request, reply) {
          decode(request)
          return handle.call(this, request, reply)
        }),
      config: { operationId },
    }
  }
}

// What an operation's handler does, for the order of pipelined requests (src/http/request-turns.ts),
// chosen beside its handler: the kinds are keyed as the handlers are, and every operation has one.
function kindOf (operationId: string): RequestKind {
  return requestKinds[operationId as keyof typeof requestKinds]
}

// The handler runs in the request's turn: once the requests read before it on its connection
// have gone far enough (a request injected by a test has no turn, and goes at once). A write's
// handler hands its write to the store's queue before its first await, and the queue takes it
// inside the call: once the call returns, the write has its place in the order of writes, and
// the turn lets the writes behind it go. A write's connection counts among those writing.
function inTurn (kind: RequestKind, writers: ActiveWriters, handle: RouteHandlerMethod): RouteHandlerMethod {
  return function handledInTurn (request, reply) {
    const turn = requestTurn(request.raw)
    const begin = (): unknown => {
      if (kind === 'write') writers.wrote(request.raw.socket)
      const handled = handle.call(this, request, reply)
      turn?.began(kind)
      return handled
    }
    const wait = turn?.waitFor(kind)
    return wait === undefined ? begin() : wait.then(begin)
  }
}

// Fastify validates a body against the schema of its media type, so a request with no body
// and no Content-Type would meet no schema at all; the spec's `required: true` is kept here.
// The hook takes a callback: an async hook costs a promise per request.
function requireBody (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  done(request.body === undefined ? SchemaViolationError.forMissingBody() : undefined)
}

// Every response has a status the spec declares: an operation whose path could answer a status
// it does not declare stops start-up, saying which.
function requireDeclared (entry: OperationEntry, statuses: readonly number[], why: string): void {
  const declared = entry.operation.responses ?? {}
  const missing = statuses.filter((status) => declared[String(status)] === undefined && declared.default === undefined)
  if (missing.length > 0) {
    throw new Error(`openapi.yaml: ${describeOperation(entry)} must declare the responses ${missing.join(', ')}, which ${why} may answer`)
  }
}
