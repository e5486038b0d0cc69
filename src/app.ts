import fastifyAuth from '@fastify/auth'
import Fastify, { type FastifyInstance } from 'fastify'
import { createCredentials } from './auth/credentials.js'
import type { Config } from './config/config.js'
import { createConnectionGuard, fastifyOptions } from './fastify-options.js'
import { createOperationHandlers } from './handlers/operation-handlers.js'
import { ActiveWriters } from './http/active-writers.js'
import { Observability } from './observability/observability.js'
import errorResponses from './plugins/error-responses.js'
import httpProtocol from './plugins/http-protocol.js'
import jsonBody from './plugins/json-body.js'
import observabilityPlugin from './plugins/request-observability.js'
import openApiRoutes from './plugins/openapi-routes.js'
import plantStore from './plugins/store-lifecycle.js'
import responseHeaders from './plugins/response-headers.js'
import unroutedRequests from './plugins/unrouted-requests.js'
import { createRateLimits, type RateLimitTuning } from './rate-limit/rate-limits.js'
import { createRequestPath } from './request-path.js'
import { type LoadedOpenApiDocument, loadOpenApiDocument } from './openapi/openapi-document.js'
import { withLoopbackWebhookUrls } from './endpoint-urls/endpoint-body-refusal.js'
import { openPlantStore } from './store/open-plant-store.js'
import type { PlantStore } from './store/plant-store.js'
import type { ResolveHost } from './endpoint-urls/endpoint-url-policy.js'
import { Webhooks } from './webhooks/webhooks.js'
import webhookDelivery from './plugins/webhook-delivery.js'

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
  // How webhook endpoints' host names are resolved: the system resolver by default; tests bring
  // their own, so that nothing is resolved or sent beyond this machine.
  readonly resolveHost?: ResolveHost
}

// The app, from the spec and a store: what it is made of, then its plugins in the order a
// request meets them. src/request-path.ts tells the whole path of a request.
export async function buildApp (config: AppConfig, dependencies: AppDependencies = {}): Promise<FastifyInstance> {
  const openApi = dependencies.openApi ?? loadOpenApiDocument()
  const observability = await Observability.create(config)
  const connectionGuard = createConnectionGuard(config, () => app.log)
  const app: FastifyInstance = Fastify(fastifyOptions(config, observability, dependencies.logColors === true, () => app.log, connectionGuard))
  // The connections that wrote lately: the request path counts them, and the store's batches
  // wait a moment for their next writes.
  const writers = new ActiveWriters()
  let store: PlantStore
  try {
    store = dependencies.store ?? await openPlantStore(config, app.log, observability.observeBatches, writers.countNow)
  } catch (error) {
    await observability.shutdown()
    throw error
  }
  try {
    const credentials = await createCredentials(openApi.document, config, store.apiTokens, app.log)
    // Fetched once now, so that a wrong JWT_JWKS_URL is told at start; the service starts anyway.
    app.addHook('onReady', async () => { void credentials.warmUp() })
    const webhooks = new Webhooks({
      document: openApi.document,
      store,
      settings: config,
      observability,
      logger: app.log,
      resolveHost: dependencies.resolveHost,
      requestLoad: connectionGuard.requestLoad,
    })
    const routeOf = createRequestPath({
      document: openApi.document,
      handlers: createOperationHandlers({
        store, openApi, metrics: observability.metrics, webhooks, traceparent: () => observability.currentTraceparent(),
      }),
      credentials,
      auth: (handlers, options) => app.auth(handlers, options),
      limits: createRateLimits(config, dependencies.rateLimitTuning),
      observability,
      writers,
    })

    // First of the preClose hooks: an answer written while the others run must already tell its
    // client to close. A signal's handler begins it sooner still (src/server.ts): app.close()
    // reaches its hooks some turns of the event loop later.
    app.decorate('beginShutdown', () => { connectionGuard.beginShutdown() })
    app.addHook('preClose', async () => { connectionGuard.beginShutdown() })
    // First, so that a request's span starts before any hook can fail it.
    await app.register(observabilityPlugin, { observability })
    // The store's life: checked when the app is ready, closed after the last request.
    await app.register(plantStore, { store })
    // The webhooks' deliveries run from when the app is ready until it closes, before the store.
    await app.register(webhookDelivery, { webhooks })
    // Every failure as the spec's Error body, and the headers every answer carries.
    await app.register(errorResponses)
    await app.register(responseHeaders)
    // The Host header, 100 Continue once a request passes its steps, and the bound of shutdown.
    await app.register(httpProtocol, { requestTimeout: config.REQUEST_TIMEOUT })
    // application/json, read strictly, is the only body read.
    await app.register(jsonBody)
    // app.auth, with which the routes below compose each operation's security requirements.
    await app.register(fastifyAuth)
    // A route per operation of the spec, each with its request path; validated as openapi.yaml
    // says, but for the loopback endpoints WEBHOOK_ALLOW_LOOPBACK allows.
    const routedApi = config.WEBHOOK_ALLOW_LOOPBACK === 'false' ? openApi : { ...openApi, document: withLoopbackWebhookUrls(openApi.document) }
    await app.register(openApiRoutes, { openApi: routedApi, basePath: config.BASE_PATH, routeOf })
    // Last: 404 and 405 for every request no operation matches.
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
