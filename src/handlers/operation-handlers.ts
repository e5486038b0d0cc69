import { loadApiReferenceFiles } from '../api-reference/api-reference-files.js'
import { requestTurn } from '../http/request-turns.js'
import type { ServiceMetrics } from '../observability/service-metrics.js'
import type { LoadedOpenApiDocument } from '../openapi/openapi-document.js'
import type { PlantStore } from '../store/plant-store.js'
import type { Webhooks } from '../webhooks/webhooks.js'
import { getApiReferenceAssetHandler, getApiReferenceHandler, getRootHandler } from './api-reference.js'
import { createPlantHandler } from './create-plant.js'
import { deletePlantHandler } from './delete-plant.js'
import { getPlantHandler } from './get-plant.js'
import { listPlantsHandler } from './list-plants.js'
import { getMetricsHandler } from './metrics.js'
import type { OperationHandlers, WriteContextOf } from './typed-handler.js'
import {
  getHealthHandler, getOpenApiJsonHandler, getOpenApiYamlHandler, getReadinessHandler,
} from './operational-endpoints.js'
import {
  createWebhookEndpointHandler, deleteWebhookEndpointHandler, listWebhookEndpointsHandler, rotateWebhookEndpointSecretHandler,
} from './webhook-endpoints.js'

export interface HandlerDependencies {
  readonly store: PlantStore
  readonly openApi: LoadedOpenApiDocument
  // Undefined with METRICS=off.
  readonly metrics: ServiceMetrics | undefined
  readonly webhooks: Webhooks
  // The traceparent of the request in progress, which its webhooks link to (undefined without traces).
  readonly traceparent: () => string | undefined
}

// The operations whose handlers hand their write to the store's queue (which tells their turn,
// WriteContext.turn), so that a write pipelined behind one needs it only queued, not done
// (src/http/request-turns.ts).
export const writesThroughTheStoreQueue: ReadonlySet<string> = new Set(['createPlant', 'deletePlant'])

// The service handlers fastify-openapi-glue binds, keyed by operationId.
export function createOperationHandlers ({ store, openApi, metrics, webhooks, traceparent }: HandlerDependencies): OperationHandlers {
  // The request's trace, which its webhooks link to; its connection, whose writes the store's
  // batch may wait for; and its turn among the requests pipelined on that connection
  // (src/store/outbox.ts).
  const writeContextOf: WriteContextOf = ({ request: { raw } }) => ({ traceparent: traceparent(), writer: raw.socket, turn: requestTurn(raw) })
  return {
    getRoot: getRootHandler(),
    listPlants: listPlantsHandler(store, openApi.document),
    createPlant: createPlantHandler(store, openApi, writeContextOf),
    getPlant: getPlantHandler(store),
    deletePlant: deletePlantHandler(store, writeContextOf),
    listWebhookEndpoints: listWebhookEndpointsHandler(webhooks),
    createWebhookEndpoint: createWebhookEndpointHandler(webhooks),
    deleteWebhookEndpoint: deleteWebhookEndpointHandler(webhooks),
    rotateWebhookEndpointSecret: rotateWebhookEndpointSecretHandler(webhooks),
    getHealth: getHealthHandler(),
    getReadiness: getReadinessHandler(store),
    getMetrics: getMetricsHandler(metrics),
    getOpenApiJson: getOpenApiJsonHandler(openApi),
    getOpenApiYaml: getOpenApiYamlHandler(openApi),
    getApiReference: getApiReferenceHandler(),
    getApiReferenceAsset: getApiReferenceAssetHandler(loadApiReferenceFiles()),
  }
}
