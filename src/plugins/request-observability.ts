import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { toApiError } from '../http/to-api-error.js'
import type { Observability } from '../observability/observability.js'

export interface ObservabilityOptions {
  readonly observability: Observability
}

// Registered before every other plugin: the request span must start before any hook can fail the
// request. Failures the metrics name (store errors, rate-limit refusals) are counted as they are
// answered; error hooks run for failed requests only, and take a callback (an async hook costs a
// promise per request).
async function observabilityPlugin (app: FastifyInstance, { observability: { tracing, metrics } }: ObservabilityOptions): Promise<void> {
  await tracing?.register(app)
  if (metrics === undefined) return
  app.addHook('onError', (request, _reply, error, done) => {
    metrics.recordFailure(error, toApiError(error, request).statusCode === 500)
    done()
  })
}

export default fp(observabilityPlugin, { name: 'observability', fastify: '5.x' })
