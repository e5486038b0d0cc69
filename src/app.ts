import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import fastifyAuth from '@fastify/auth'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import { createApiTokenVerifier } from './auth/api-token-verifier.js'
import { createBearerAuth } from './auth/bearer-auth.js'
import { createJwtVerifier } from './auth/jwt/jwt-verifier.js'
import { createJwtTokenVerifier } from './auth/jwt-token-verifier.js'
import { jwtSettingsOf } from './auth/jwt-settings.js'
import { createManagedTokenVerifier } from './auth/managed-token-verifier.js'
import { createMetricsAuth } from './auth/metrics-auth.js'
import type { TokenVerifier } from './auth/token-verifier.js'
import { type Config, parseTokenList } from './config.js'
import { createOperationHandlers } from './handlers/operation-handlers.js'
import { answerClientError } from './http/client-error-response.js'
import { ConnectionGuard } from './http/connection-guard.js'
import { type LogDestination, stdoutLogDestination } from './http/log-destination.js'
import { prettyLogDestination } from './http/pretty-log-line.js'
import { AccessLog, serializeRequest } from './http/request-log.js'
import { sendError } from './http/error-response.js'
import errorResponses from './plugins/error-responses.js'
import httpProtocol from './plugins/http-protocol.js'
import jsonBody from './plugins/json-body.js'
import { countRequests } from './plugins/metrics.js'
import observabilityPlugin, { Observability } from './plugins/observability.js'
import openApiRoutes from './plugins/openapi-routes.js'
import plantStore from './plugins/plant-store.js'
import responseHeaders from './plugins/response-headers.js'
import unroutedRequests from './plugins/unrouted-requests.js'
import { createRateLimits, type RateLimitTuning } from './rate-limit/rate-limits.js'
import { type LoadedOpenApiDocument, loadOpenApiDocument } from './spec/openapi-document.js'
import { buildRequestValidator, exactValidationOptions } from './spec/request-validator.js'
import { openPlantStore } from './store/open-plant-store.js'
import type { PlantStore } from './store/plant-store.js'

export type AppConfig = Omit<Config, 'PORT' | 'HOST'>

export interface AppDependencies {
  // Defaults to the store DATABASE_URL names; the app closes whichever it is given.
  readonly store?: PlantStore
  // Defaults to the checked-in openapi.yaml.
  readonly openApi?: LoadedOpenApiDocument
  // Defaults to the system clock and 100,000 keys per window; tests roll windows with a clock.
  readonly rateLimitTuning?: Partial<RateLimitTuning>
  // Whether readable log lines (LOG_FORMAT=pretty) may colour their levels: only on a terminal.
  readonly logColors?: boolean
}

const clientRequestId = /^[A-Za-z0-9._:-]{1,128}$/

// After SIGTERM, how long a keep-alive connection stays open while idle: a request its client sent
// just before the signal still arrives and is answered.
const shutdownIdleGraceMs = 1000

export async function buildApp (config: AppConfig, dependencies: AppDependencies = {}): Promise<FastifyInstance> {
  const openApi = dependencies.openApi ?? loadOpenApiDocument()
  const connectionGuard = new ConnectionGuard({
    maxConnections: config.MAX_CONNECTIONS,
    maxUnansweredRequests: config.MAX_UNANSWERED_REQUESTS,
    shutdownIdleGraceMs,
  }, (): FastifyBaseLogger => app.log)
  const observability = await Observability.create(config)
  const app: FastifyInstance = Fastify({
    logger: {
      level: config.LOG_LEVEL,
      // Request lines are written by serializeRequest, which leaves out headers and query values
      // (test/access-log.test.ts holds it to that), so there is nothing under `req` to redact, and
      // redacting there would copy every access line. Headers logged by hand are still redacted.
      serializers: { req: serializeRequest },
      redact: { paths: ['headers.authorization', 'headers.cookie'], censor: '[redacted]' },
      stream: logDestination(config, dependencies.logColors === true),
    },
    logController: new AccessLog(observability.metrics === undefined ? undefined : countRequests(observability.metrics)),
    bodyLimit: config.BODY_LIMIT,
    // A request must arrive in full within this time, or it gets a 408 and its connection is
    // closed: a client that sends its body slowly cannot hold a connection for ever.
    requestTimeout: config.REQUEST_TIMEOUT,
    http: {
      // With headersTimeout (60 s by default) above requestTimeout, a request whose body stalled
      // was not timed out on Node 20; and Node looks for expired requests only every
      // connectionsCheckingInterval (30 s by default).
      headersTimeout: Math.min(60_000, config.REQUEST_TIMEOUT),
      connectionsCheckingInterval: Math.min(1000, config.REQUEST_TIMEOUT),
      // Node's own Host check answers a bare 400; http-protocol.ts answers an Error body.
      requireHostHeader: false,
    },
    // HEAD is not declared in openapi.yaml, so it gets the same 405 as any undeclared method.
    exposeHeadRoutes: false,
    // Fastify's own 503 while closing has a body the spec does not declare; in-flight and
    // keep-alive requests are finished instead, and the store closes after them.
    return503OnClosing: false,
    // The connection guard bounds each connection and closes idle ones gently on shutdown,
    // where Fastify and Node would reset them at once.
    serverFactory: connectionGuard.serverFactory,
    forceCloseConnections: false,
    genReqId: (request) => {
      const sent = request.headers['x-request-id']
      return typeof sent === 'string' && clientRequestId.test(sent) ? sent : randomUUID()
    },
    ajv: exactValidationOptions,
    schemaController: { compilersFactory: { buildValidator: buildRequestValidator } },
    clientErrorHandler: countedClientErrors(observability),
    frameworkErrors: (error, request, reply) => {
      void sendError(error, request as FastifyRequest, reply as FastifyReply)
    },
  })

  let store: PlantStore
  try {
    store = dependencies.store ?? await openPlantStore(config, app.log, observability.observeBatches)
  } catch (error) {
    await observability.shutdown()
    throw error
  }
  try {
    await app.register(observabilityPlugin, { observability })
    await app.register(plantStore, { store })
    await app.register(errorResponses)
    await app.register(responseHeaders)
    await app.register(httpProtocol, { requestTimeout: config.REQUEST_TIMEOUT })
    await app.register(jsonBody)
    await app.register(fastifyAuth)
    await app.register(openApiRoutes, {
      openApi,
      basePath: config.BASE_PATH,
      handlers: createOperationHandlers({ store, openApi, metrics: observability.metrics, metricsAuth: createMetricsAuth(config.METRICS_TOKEN) }),
      securityHandlers: observability.traceAuthentication({
        bearerAuth: createBearerAuth(app.auth, await tokenVerifiers(app, config, store)),
      }),
      rateLimits: createRateLimits(config, dependencies.rateLimitTuning),
    })
    await app.register(unroutedRequests, { openApi, basePath: config.BASE_PATH })
  } catch (error) {
    // An app that cannot be built is never closed by its caller: release the store, and the
    // traces' exporter, here.
    await store.close()
    await observability.shutdown()
    throw error
  }
  return app
}

// Requests Node answers before they reach Fastify (malformed HTTP, a 408, a 431) have no route
// and no hooks: their answers are counted here, as operation "unparsed".
function countedClientErrors (observability: Observability): NonNullable<FastifyServerOptions['clientErrorHandler']> {
  const unparsed = observability.metrics?.requests.forOperation('unparsed')
  if (unparsed === undefined) return answerClientError
  return function answerAndCount (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
    const answered = answerClientError.call(this, error, socket)
    if (answered !== undefined) unparsed.countResponse(answered.statusCode)
  }
}

// LOG_FORMAT=auto is settled by src/server.ts, which knows whether standard output is a terminal;
// an app built without it (the tests) logs JSON.
function logDestination (config: AppConfig, colors: boolean): LogDestination {
  return config.LOG_FORMAT === 'pretty' ? prettyLogDestination(stdoutLogDestination(), { colors }) : stdoutLogDestination()
}

// The ways a bearer token is accepted, cheapest first: the tokens of API_TOKENS (if any), the
// store's managed tokens (always), JWTs (when JWT_ISSUER is set).
async function tokenVerifiers (app: FastifyInstance, config: AppConfig, store: PlantStore): Promise<TokenVerifier[]> {
  const verifiers: TokenVerifier[] = []
  const apiTokens = parseTokenList(config.API_TOKENS)
  if (apiTokens.length > 0) verifiers.push(createApiTokenVerifier(apiTokens))
  verifiers.push(createManagedTokenVerifier(store.apiTokens, {
    cacheTtlMs: config.TOKEN_CACHE_TTL * 1000,
    onRecordUseFailed: (error) => app.log.warn({ err: error }, "a managed token's last use could not be recorded"),
  }))
  const jwtSettings = jwtSettingsOf(config)
  if (jwtSettings !== undefined) {
    const jwt = await createJwtVerifier(jwtSettings, {
      onKeysUnavailable: (error) => app.log.warn({ err: error }, "the identity provider's signing keys could not be fetched: JWT callers get 503"),
    })
    verifiers.push(createJwtTokenVerifier(jwt))
    // Fetched once now, so that a wrong JWT_JWKS_URL is told at start; the service starts anyway.
    app.addHook('onReady', async () => { void jwt.warmUp() })
  }
  return verifiers
}
