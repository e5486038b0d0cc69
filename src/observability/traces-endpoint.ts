import type { Config } from '../config/config.js'

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
