import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { toApiError } from '../errors/to-api-error.js'
import type { RequestCompleted } from '../http/request-log.js'
import type { ServiceMetrics } from '../metrics/service-metrics.js'

export interface MetricsOptions {
  readonly metrics: ServiceMetrics
}

// Requests no operation matched (404, 405) are counted together: their paths are whatever
// clients send.
const unrouted = 'unrouted'

// Counts a request once it is answered, by operation and status, with its latency: the one
// Fastify measures for the access line (reply.elapsedTime). Called by the access log
// (src/http/request-log.ts), which Fastify calls for every request: no hook of its own.
export function countRequests (metrics: ServiceMetrics): RequestCompleted {
  return (request, reply) => {
    const operation = request.is404 ? unrouted : request.routeOptions.config.operationId ?? unrouted
    metrics.requests.record(operation, reply.statusCode, reply.elapsedTime)
  }
}

// Counts the failures the metrics name (store errors, rate-limit refusals). Error hooks run for
// failed requests only, and take a callback: an async hook costs a promise per request.
async function metricsPlugin (app: FastifyInstance, { metrics }: MetricsOptions): Promise<void> {
  app.addHook('onError', (request, _reply, error, done) => {
    metrics.recordFailure(error, toApiError(error, request).statusCode === 500)
    done()
  })
}

export default fp(metricsPlugin, { name: 'metrics', fastify: '5.x' })
