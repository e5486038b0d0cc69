import type { FastifyInstance, onResponseHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { toApiError } from '../errors/to-api-error.js'
import type { ServiceMetrics } from '../metrics/service-metrics.js'

export interface MetricsOptions {
  readonly metrics: ServiceMetrics
}

// Requests no operation matched (404, 405, a malformed request) are counted together: their
// paths are whatever clients send.
const unrouted = 'unrouted'

// Counts every response by operation and status, with its latency, and the failures the
// metrics name (store errors, rate-limit refusals). The latency is the one Fastify measures
// for its own log line (reply.elapsedTime), so measuring costs nothing more; every hook is a
// callback, as an async hook costs a promise per request.
async function metricsPlugin (app: FastifyInstance, { metrics }: MetricsOptions): Promise<void> {
  // Each operation's route gets a hook of its own, bound to its operation's counters, so that
  // nothing is looked up per request. Routes are declared after this plugin (src/app.ts).
  app.addHook('onRoute', (route) => {
    const operationId = route.config?.operationId
    if (operationId === undefined) return
    const operation = metrics.requests.forOperation(operationId)
    const countResponse: onResponseHookHandler = (_request, reply, done) => {
      operation.record(reply.statusCode, reply.elapsedTime)
      done()
    }
    route.onResponse = [...[route.onResponse ?? []].flat(), countResponse]
  })

  const unroutedRequests = metrics.requests.forOperation(unrouted)
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unroutedRequests.record(reply.statusCode, reply.elapsedTime)
    done()
  })

  app.addHook('onError', (request, _reply, error, done) => {
    metrics.recordFailure(error, toApiError(error, request).statusCode === 500)
    done()
  })
}

export default fp(metricsPlugin, { name: 'metrics', fastify: '5.x' })
