import type { operations } from '../../generated/openapi.js'
import { loadApiReferenceFiles } from '../api-reference/api-reference-files.js'
import type { RequestKind } from '../http/request-turns.js'
import type { ServiceMetrics } from '../observability/service-metrics.js'
import type { LoadedOpenApiDocument } from '../openapi/openapi-document.js'
import type { PlantStore } from '../store/plant-store.js'
import type { Webhooks } from '../webhooks/webhooks.js'
import { getApiReferenceAssetHandler, getApiReferenceHandler, getRootHandler } from './api-reference.js'
import {
  getHealthHandler, getMetricsHandler, getOpenApiJsonHandler, getOpenApiYamlHandler, getReadinessHandler,
} from './operational-endpoints.js'
import { createPlantHandler, deletePlantHandler, getPlantHandler, listPlantsHandler, updatePlantHandler } from './plants.js'
import type { OperationHandlers } from './typed-handler.js'
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

// What each operation's handler does, for the order of requests pipelined on a connection
// (src/http/request-turns.ts): an operation of the spec fails to compile until its kind is
// chosen here. A 'write' hands its write to the store's queue before its first await, which
// test/write-handlers.test.ts holds each to.
export const requestKinds: { readonly [OperationId in keyof operations]: RequestKind } = {
  createPlant: 'write',
  updatePlant: 'write',
  deletePlant: 'write',
  getPlant: 'read',
  listPlants: 'read',
  listWebhookEndpoints: 'read',
  getRoot: 'read',
  getHealth: 'read',
  getReadiness: 'read',
  getMetrics: 'read',
  getOpenApiJson: 'read',
  getOpenApiYaml: 'read',
  getApiReference: 'read',
  getApiReferenceAsset: 'read',
  createWebhookEndpoint: 'other',
  deleteWebhookEndpoint: 'other',
  rotateWebhookEndpointSecret: 'other',
}

// The service handlers fastify-openapi-glue binds, keyed by operationId.
export function createOperationHandlers ({ store, openApi, metrics, webhooks, traceparent }: HandlerDependencies): OperationHandlers {
  return {
    getRoot: getRootHandler(),
    listPlants: listPlantsHandler(store, openApi.document),
    createPlant: createPlantHandler(store, openApi, traceparent),
    getPlant: getPlantHandler(store),
    updatePlant: updatePlantHandler(store, openApi, traceparent),
    deletePlant: deletePlantHandler(store, traceparent),
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
