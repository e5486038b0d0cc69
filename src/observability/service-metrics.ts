import { Counter, Histogram, Registry } from 'prom-client'
import { TooManyRequestsError } from '../errors/api-errors.js'
import type { PolicyName } from '../rate-limit/rate-limit-policy.js'
import type { BatchObserver, StoreBackend } from '../store/batch-observer.js'
import { StoreUnavailableError } from '../store/store-errors.js'
import { processMetrics } from './process-metrics.js'
import { RequestMetrics } from './request-metrics.js'

export type StoreErrorKind = 'unavailable' | 'unexpected'

const storeErrorKinds: readonly StoreErrorKind[] = ['unavailable', 'unexpected']
const rateLimitPolicies: readonly PolicyName[] = ['per-credential', 'per-address', 'failed-auth']

// Every metric of one app, in a registry of its own, so that apps built side by side (as the
// tests build them) count apart. No label holds request data: operations are operationIds,
// and the other labels take the few values listed here.
export class ServiceMetrics {
  readonly requests = new RequestMetrics()
  readonly #registry = new Registry()
  // The Prometheus text format 0.0.4, as openapi.yaml declares it.
  readonly contentType = this.#registry.contentType
  readonly #batchSize = new Histogram({
    name: 'plant_store_store_batch_size',
    help: 'Writes per transaction of the store\'s batched creates, by backend.',
    labelNames: ['backend'],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [this.#registry],
  })

  readonly #commitSeconds = new Histogram({
    name: 'plant_store_store_commit_duration_seconds',
    help: 'Time a transaction of the store\'s batched creates took, committed or failed, by backend.',
    labelNames: ['backend'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.#registry],
  })

  readonly #storeErrors = new Counter({
    name: 'plant_store_store_errors_total',
    help: 'Requests the store failed, by kind: unavailable (answered 503) or unexpected (answered 500; ' +
      'the store is what fails unexpectedly here, so every 500 is counted).',
    labelNames: ['kind'],
    registers: [this.#registry],
  })

  readonly #rateLimitRefusals = new Counter({
    name: 'plant_store_rate_limit_refusals_total',
    help: 'Requests a rate limit refused (429), by policy.',
    labelNames: ['policy'],
    registers: [this.#registry],
  })

  constructor () {
    // Every series exists from the start at zero, so that a rate or an alert sees its first event.
    for (const kind of storeErrorKinds) this.#storeErrors.labels(kind).inc(0)
    for (const policy of rateLimitPolicies) this.#rateLimitRefusals.labels(policy).inc(0)
  }

  // A batch is a few hundred microseconds of work at least, so prom-client's own cost is
  // nothing here, unlike on every request.
  observeBatches (backend: StoreBackend): BatchObserver {
    this.#batchSize.zero({ backend })
    this.#commitSeconds.zero({ backend })
    const batchSize = this.#batchSize.labels(backend)
    const commitSeconds = this.#commitSeconds.labels(backend)
    return {
      batchStarted: (writes) => {
        batchSize.observe(writes.length)
        return ({ durationSeconds }) => commitSeconds.observe(durationSeconds)
      },
    }
  }

  // Told of every failure answered to a request; counts those it has a metric for. `internal`
  // says the failure is answered 500.
  recordFailure (error: unknown, internal: boolean): void {
    if (error instanceof TooManyRequestsError) this.#rateLimitRefusals.labels(error.policy).inc()
    else if (error instanceof StoreUnavailableError) this.#storeErrors.labels('unavailable').inc()
    else if (internal) this.#storeErrors.labels('unexpected').inc()
  }

  async exposition (): Promise<string> {
    const [processText, serviceText] = await Promise.all([processMetrics().metrics(), this.#registry.metrics()])
    return processText + serviceText + this.requests.exposition()
  }
}
