import { FastifyOtelInstrumentation } from '@fastify/otel'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { context, propagation, type Span, type SpanContext, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor, type Span as SdkSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { ATTR_SERVICE_NAME, ATTR_URL_PATH } from '@opentelemetry/semantic-conventions'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { toApiError } from '../http/to-api-error.js'
import type { BatchObserver, StoreBackend } from '../store/batch-observer.js'

// Attributes of this service's own, under its name as OpenTelemetry advises.
export const tracingAttributes = {
  operationId: 'plant_store.operation_id',
  securityScheme: 'plant_store.security_scheme',
  batchSize: 'plant_store.batch.size',
  backend: 'plant_store.store.backend',
  webhookEvent: 'plant_store.webhook.event',
} as const

// An attempt to deliver a webhook, traced: the traceparent to send with it, and its end.
export interface DeliveryTrace {
  readonly traceparent: string | undefined
  end (failure?: string): void
}

// A step of a request's path, in onRequest, that decides with a callback: nothing to go on, or
// the failure.
export type RequestStep = (request: FastifyRequest, reply: FastifyReply, decided: (failure?: Error) => void) => void

// Requests no operation matched (404, 405, a malformed request) share one name, as in the metrics.
const unroutedName = 'unrouted'

// Traces of one app, sent by OTLP/HTTP (JSON) to `endpoint`: a span per request named after its
// operationId (@fastify/otel's, with a child span for its handler), a child span for its
// authentication, and a span per committed batch of creates, linked both ways to the handlers of
// the requests it holds. Nothing here is global but the context manager (OpenTelemetry has only
// one, and so the propagator that joins a caller's trace from its `traceparent` header), which is
// registered when the app starts and removed when it closes.
//
// Spans carry no more of a request than its access log line does: the path without its query
// (where a careless client may put a token), and for a failure the message its client was
// answered, never an internal error's own (a driver's message may quote the data).
export class Tracing {
  readonly #provider: BasicTracerProvider
  readonly #tracer: Tracer
  readonly #instrumentation: FastifyOtelInstrumentation
  #contextManager: AsyncLocalStorageContextManager | undefined

  constructor (endpoint: string, serviceName: string) {
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
      // In this order: a span is scrubbed before it is queued for export.
      spanProcessors: [new HandlerFailureScrubber(), new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }))],
    })
    this.#tracer = this.#provider.getTracer('plant-store')
    this.#instrumentation = new FastifyOtelInstrumentation({
      // A span per hook would cost more than the hooks: the request, its handler, and the
      // authentication span below say where the time goes.
      instrumentHooks: false,
      recordExceptions: false,
      requestHook: nameAfterOperation,
    })
    this.#instrumentation.setTracerProvider(this.#provider)
  }

  // Registers @fastify/otel and the hooks that complete its spans; the app must register it
  // before any other plugin, so that its request span starts first.
  async register (app: FastifyInstance): Promise<void> {
    const manager = new AsyncLocalStorageContextManager().enable()
    if (context.setGlobalContextManager(manager)) {
      this.#contextManager = manager
      propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    }
    await app.register(this.#instrumentation.plugin())
    // @fastify/otel marks a routed request failed with its error's own message; an unrouted
    // request's failure (404, 405) is not marked at all. Both get the client's message, set
    // again before the request span ends (at @fastify/otel's onSend, after this one).
    const answeredMessages = new WeakMap<FastifyRequest, string>()
    app.addHook('onError', (request, _reply, error, done) => {
      const message = toApiError(error, request).message
      answeredMessages.set(request, message)
      request.opentelemetry().span?.setStatus({ code: SpanStatusCode.ERROR, message })
      done()
    })
    app.addHook('onSend', (request, _reply, payload, done) => {
      const message = answeredMessages.get(request)
      if (message !== undefined) request.opentelemetry().span?.setStatus({ code: SpanStatusCode.ERROR, message })
      done(null, payload)
    })
    app.addHook('onClose', async () => this.shutdown())
  }

  // The spans still buffered are sent before the app closes.
  async shutdown (): Promise<void> {
    await this.#provider.shutdown()
    if (this.#contextManager !== undefined) {
      context.disable()
      propagation.disable()
    }
    this.#contextManager = undefined
  }

  // A request's authentication as a child span of the request, ended when it has decided.
  traceAuthentication (schemeNames: string, step: RequestStep): RequestStep {
    const tracer = this.#tracer
    const attributes = { [tracingAttributes.securityScheme]: schemeNames }
    return function authenticateTraced (request, reply, decided) {
      const span = tracer.startSpan('authenticate', { attributes }, request.opentelemetry().context ?? undefined)
      step(request, reply, (failure) => {
        if (failure !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message })
        span.end()
        decided(failure)
      })
    }
  }

  // A span per committed batch, a root of its own (a batch belongs to no one request), linked
  // to the span each write was queued from (its request's handler) and linked from it.
  observeBatches (backend: StoreBackend): BatchObserver {
    const tracer = this.#tracer
    return {
      writeQueued: () => trace.getActiveSpan(),
      batchStarted: (writes) => {
        const writers = writes.filter((write): write is Span => write !== undefined)
        const batch = tracer.startSpan('commit batch', {
          root: true,
          attributes: { [tracingAttributes.batchSize]: writes.length, [tracingAttributes.backend]: backend },
          links: writers.map((writer) => ({ context: writer.spanContext() })),
        })
        for (const writer of writers) writer.addLink({ context: batch.spanContext() })
        return ({ error }) => {
          // The error's name only: a driver's message may quote the data of the batch.
          if (error !== undefined) batch.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'Error' })
          batch.end()
        }
      },
    }
  }

  // The W3C traceparent of the span the caller runs in (a request's handler): the request that
  // causes a webhook is linked from its delivery's spans.
  currentTraceparent (): string | undefined {
    const span = trace.getActiveSpan()
    return span === undefined ? undefined : traceparentOf(span.spanContext())
  }

  // A span per attempt to deliver a webhook, a root of its own (it happens after the request
  // that caused it has been answered), linked to that request's span.
  traceDelivery (event: string, causedBy: string | undefined): DeliveryTrace {
    const cause = spanContextOf(causedBy)
    const span = this.#tracer.startSpan(`deliver ${event}`, {
      root: true,
      kind: SpanKind.CLIENT,
      attributes: { [tracingAttributes.webhookEvent]: event },
      links: cause === undefined ? [] : [{ context: cause }],
    })
    return {
      traceparent: traceparentOf(span.spanContext()),
      end: (failure) => {
        if (failure !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: failure })
        span.end()
      },
    }
  }
}

function traceparentOf ({ traceId, spanId, traceFlags }: SpanContext): string {
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`
}

function spanContextOf (traceparent: string | undefined): SpanContext | undefined {
  const parts = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent ?? '')
  if (parts === null) return undefined
  return { traceId: parts[1]!, spanId: parts[2]!, traceFlags: parseInt(parts[3]!, 16), isRemote: true }
}

function nameAfterOperation (span: Span, request: FastifyRequest): void {
  const operationId = request.routeOptions.config.operationId ?? unroutedName
  span.updateName(operationId)
  span.setAttribute(tracingAttributes.operationId, operationId)
  const queryStart = request.url.indexOf('?')
  if (queryStart !== -1) span.setAttribute(ATTR_URL_PATH, request.url.slice(0, queryStart))
}

// @fastify/otel ends a handler's span when the handler throws, with the error's own message as
// the span's status; for an unexpected failure that is a driver's message, which may quote the
// data. The span is still failed, but says no more: the request span, its parent, carries the
// message the client was answered (above).
class HandlerFailureScrubber implements SpanProcessor {
  onEnding (span: SdkSpan): void {
    if (span.attributes['fastify.type'] !== 'request-handler' || span.status.code !== SpanStatusCode.ERROR) return
    span.setStatus({ code: SpanStatusCode.ERROR })
  }

  onStart (): void {}
  onEnd (): void {}
  async forceFlush (): Promise<void> {}
  async shutdown (): Promise<void> {}
}
