import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { SecurityHandler } from '../auth/token-verifier.js'
import type { Config } from '../config.js'
import { ServiceMetrics } from '../metrics/service-metrics.js'
import { bothObservers } from '../store/batch-observer.js'
import type { ObserveBatches } from '../store/open-plant-store.js'
import { tracesEndpointOf } from '../tracing/traces-endpoint.js'
import type { Tracing } from '../tracing/tracing.js'
import metricsPlugin from './metrics.js'

export type ObservabilitySettings = Pick<Config,
  'METRICS' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SERVICE_NAME'>

// The metrics (unless METRICS=off) and the traces (when an OTLP endpoint is set) of one app,
// and what the store and the authentication need to be observed by them.
export class Observability {
  private constructor (
    readonly metrics: ServiceMetrics | undefined,
    readonly tracing: Tracing | undefined
  ) {}

  // OpenTelemetry is loaded only when traces are on: without them, none of it is even imported.
  static async create (settings: ObservabilitySettings): Promise<Observability> {
    const metrics = settings.METRICS === 'on' ? new ServiceMetrics() : undefined
    const endpoint = tracesEndpointOf(settings)
    if (endpoint === undefined) return new Observability(metrics, undefined)
    const { Tracing } = await import('../tracing/tracing.js')
    return new Observability(metrics, new Tracing(endpoint, settings.OTEL_SERVICE_NAME))
  }

  readonly observeBatches: ObserveBatches = (backend) => {
    const metricsObserver = this.metrics?.observeBatches(backend)
    const tracingObserver = this.tracing?.observeBatches(backend)
    if (metricsObserver === undefined || tracingObserver === undefined) return metricsObserver ?? tracingObserver
    return bothObservers(metricsObserver, tracingObserver)
  }

  // Sends the spans still buffered and stops exporting; the app's close does it once built.
  async shutdown (): Promise<void> {
    await this.tracing?.shutdown()
  }

  // The handlers as they are when traces are off, so authentication costs what it did.
  traceAuthentication<Handlers extends Readonly<Record<string, SecurityHandler>>> (handlers: Handlers): Handlers {
    return this.tracing?.traceAuthentication(handlers) ?? handlers
  }
}

export interface ObservabilityOptions {
  readonly observability: Observability
}

// Registered before every other plugin: the request span must start before any hook can fail the
// request, and the per-operation counters are attached to routes as they are declared.
async function observabilityPlugin (app: FastifyInstance, { observability }: ObservabilityOptions): Promise<void> {
  await observability.tracing?.register(app)
  if (observability.metrics !== undefined) await app.register(metricsPlugin, { metrics: observability.metrics })
}

export default fp(observabilityPlugin, { name: 'observability', fastify: '5.x' })
