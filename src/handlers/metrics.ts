import type { operations } from '../../generated/openapi.js'
import type { SecurityHandler } from '../auth/token-verifier.js'
import { NotFoundError } from '../errors/api-errors.js'
import type { ServiceMetrics } from '../metrics/service-metrics.js'
import type { OperationHandler } from './operation-handler.js'

// With METRICS=off there are no metrics: the path answers as an unknown one would. With
// METRICS_TOKEN, the scraper's bearer token is checked here, by the operation itself: the token
// is the operator's, so openapi.yaml declares no security scheme for it (src/auth/metrics-auth.ts).
export function getMetricsHandler (metrics: ServiceMetrics | undefined, authenticate: SecurityHandler): OperationHandler<operations['getMetrics']> {
  return async function getMetrics (request, reply) {
    if (metrics === undefined) throw NotFoundError.forRoute(request.method, request.routeOptions.url ?? '/metrics')
    await new Promise<void>((resolve, reject) => {
      authenticate(request, reply, (error) => { if (error === undefined || error === null) resolve(); else reject(error) })
    })
    reply.type(metrics.contentType)
    return metrics.exposition()
  }
}
