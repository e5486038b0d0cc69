import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config/config.js'
import type { ApiError } from '../errors/api-errors.js'
import { bothObservers } from '../store/batch-observer.js'
import type { ObserveBatches } from '../store/open-plant-store.js'
import { ServiceMetrics } from './service-metrics.js'
import type { DeliveryTrace, RequestStep, Tracing } from './tracing.js'

export type ObservabilitySettings = Pick<Config,
  'METRICS' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SERVICE_NAME'>

// Answers a request Node could not parse, and says what it answered (undefined: it closed the
// connection unanswered).
export type ClientErrorAnswer = (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket) => ApiError | undefined

// Requests no operation matched (404, 405) are counted together: their paths are whatever
// clients send.
const unrouted = 'unrouted'
// Requests Node answers before they reach Fastify (malformed HTTP, a 408, a 431) have no route.
const unparsed = 'unparsed'

// The metrics (unless METRICS=off) and the traces (when an OTLP endpoint is set) of one app, and
// what the store, the request path and the access log need to be observed by them. Without
// traces nothing of OpenTelemetry is even imported, and each hook below costs what it did before.
export class Observability {
  private constructor (
    readonly metrics: ServiceMetrics | undefined,
    readonly tracing: Tracing | undefined
  ) {}

  static async create (settings: ObservabilitySettings): Promise<Observability> {
    const metrics = settings.METRICS === 'on' ? new ServiceMetrics() : undefined
    const endpoint = tracesEndpointOf(settings)
    if (endpoint === undefined) return new Observability(metrics, undefined)
    const { Tracing } = await import('./tracing.js')
    return new Observability(metrics, new Tracing(endpoint, settings.OTEL_SERVICE_NAME))
  }

  readonly observeBatches: ObserveBatches = (backend) => {
    const metricsObserver = this.metrics?.observeBatches(backend)
    const tracingObserver = this.tracing?.observeBatches(backend)
    if (metricsObserver === undefined || tracingObserver === undefined) return metricsObserver ?? tracingObserver
    return bothObservers(metricsObserver, tracingObserver)
  }

  // The authentication step of a request's path, as a span of its own when traces are on.
  traceAuthentication (schemeNames: string, step: RequestStep): RequestStep {
    return this.tracing?.traceAuthentication(schemeNames, step) ?? step
  }

  // The traceparent of the request in progress, which its webhooks' deliveries link to;
  // undefined when traces are off.
  currentTraceparent (): string | undefined {
    return this.tracing?.currentTraceparent()
  }

  // A delivery attempt's span, when traces are on.
  traceDelivery (event: string, causedBy: string | undefined): DeliveryTrace | undefined {
    return this.tracing?.traceDelivery(event, causedBy)
  }

  // Counts a request once it is answered, by operation and status, with the latency Fastify
  // measures for the access line (reply.elapsedTime). The access log calls it: Fastify calls the
  // log for every request anyway, where a hook of its own would cost every request a hook run.
  get requestCompleted (): ((request: FastifyRequest, reply: FastifyReply) => void) | undefined {
    const requests = this.metrics?.requests
    if (requests === undefined) return undefined
    return (request, reply) => {
      const operation = request.is404 ? unrouted : request.routeOptions.config.operationId ?? unrouted
      requests.record(operation, reply.statusCode, reply.elapsedTime)
    }
  }

  // Counts the answers to requests Node could not parse, as operation "unparsed" (not timed).
  countedClientErrors (answer: ClientErrorAnswer): ClientErrorAnswer {
    const counted = this.metrics?.requests.forOperation(unparsed)
    if (counted === undefined) return answer
    return function answerAndCount (error, socket) {
      const answered = answer.call(this, error, socket)
      if (answered !== undefined) counted.countResponse(answered.statusCode)
      return answered
    }
  }

  // Sends the spans still buffered and stops exporting; the app's close does it once built.
  async shutdown (): Promise<void> {
    await this.tracing?.shutdown()
  }
}

export type TracingSettings = Pick<Config,
  'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SERVICE_NAME'>

// Where traces are sent, as the OpenTelemetry specification reads its variables: the traces
// endpoint as it is, or else the general endpoint with /v1/traces appended to its path.
// Undefined, and no traces, when neither is set.
export function tracesEndpointOf (settings: TracingSettings): string | undefined {
  if (settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== '') return settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  const base = settings.OTEL_EXPORTER_OTLP_ENDPOINT
  if (base === '') return undefined
  return `${base}${base.endsWith('/') ? '' : '/'}v1/traces`
}
