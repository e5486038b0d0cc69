import type { operations } from '../../generated/openapi.js'
import { NotFoundError } from '../errors/api-errors.js'
import type { ServiceMetrics } from '../observability/service-metrics.js'
import type { LoadedOpenApiDocument } from '../openapi/openapi-document.js'
import type { PlantStore } from '../store/plant-store.js'
import { type OperationHandler, sendJsonText } from './typed-handler.js'

export function getHealthHandler (): OperationHandler<operations['getHealth']> {
  return async function getHealth () {
    return { status: 'ok' }
  }
}

export function getReadinessHandler (store: PlantStore): OperationHandler<operations['getReadiness']> {
  return async function getReadiness () {
    await store.checkReady()
    return { status: 'ready' }
  }
}

// With METRICS=off there are no metrics: the path answers as an unknown one would. METRICS_TOKEN,
// when set, is checked on the request's path before this runs (src/request-path.ts).
export function getMetricsHandler (metrics: ServiceMetrics | undefined): OperationHandler<operations['getMetrics']> {
  return async function getMetrics (request, reply) {
    if (metrics === undefined) return NotFoundError.forRoute(request.method, request.routeOptions.url ?? '/metrics')
    reply.type(metrics.contentType)
    return metrics.exposition()
  }
}

// The served documents are fixed for the life of the process: each is serialised once, here,
// and every response sends the same bytes, however many requests a client pipelines (see
// docs/reliability.md).
export function getOpenApiJsonHandler ({ document }: LoadedOpenApiDocument): OperationHandler<operations['getOpenApiJson']> {
  const json = Buffer.from(JSON.stringify(document))
  return async function getOpenApiJson (request, reply) {
    return sendJsonText(reply, json)
  }
}

export function getOpenApiYamlHandler ({ yamlText }: LoadedOpenApiDocument): OperationHandler<operations['getOpenApiYaml']> {
  const yaml = Buffer.from(yamlText)
  return async function getOpenApiYaml (request, reply) {
    reply.type('application/yaml; charset=utf-8')
    return yaml
  }
}
