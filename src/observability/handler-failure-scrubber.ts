import { SpanStatusCode } from '@opentelemetry/api'
import type { Span, SpanProcessor } from '@opentelemetry/sdk-trace-base'

// @fastify/otel ends a handler's span when the handler throws, with the error's own message as
// the span's status; for an unexpected failure that is a driver's message, which may quote the
// data. The span is still failed, but says no more: the request span, its parent, carries the
// message the client was answered (src/tracing/tracing.ts).
export class HandlerFailureScrubber implements SpanProcessor {
  onEnding (span: Span): void {
    if (span.attributes['fastify.type'] !== 'request-handler' || span.status.code !== SpanStatusCode.ERROR) return
    span.setStatus({ code: SpanStatusCode.ERROR })
  }

  onStart (): void {}
  onEnd (): void {}
  async forceFlush (): Promise<void> {}
  async shutdown (): Promise<void> {}
}
