import type { operations } from '../../generated/openapi.js'
import { NotFoundError } from '../errors/api-errors.js'
import type { ServiceMetrics } from '../observability/service-metrics.js'
import type { OperationHandler } from './typed-handler.js'

// With METRICS=off there are no metrics: the path answers as an unknown one would. METRICS_TOKEN,
// when set, is checked on the request's path before this runs (src/request-path.ts).
export function getMetricsHandler (metrics: ServiceMetrics | undefined): OperationHandler<operations['getMetrics']> {
  return async function getMetrics (request, reply) {
    if (metrics === undefined) return NotFoundError.forRoute(request.method, request.routeOptions.url ?? '/metrics')
    reply.type(metrics.contentType)
    return metrics.exposition()
  }
}
