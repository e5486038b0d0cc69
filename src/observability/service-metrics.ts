import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { TooManyRequestsError } from '../errors/api-errors.js'
import type { PolicyName } from '../rate-limit/rate-limit-policy.js'
import type { BatchObserver, StoreBackend } from '../store/batch-observer.js'
import { StoreUnavailableError } from '../store/store-errors.js'
import { RequestMetrics } from './request-metrics.js'

// What a webhook's attempt came to: delivered; failed and to be tried again; failed its last
// attempt (kept as failed); or answered 410, which disables the endpoint.
export type WebhookOutcome = 'delivered' | 'failed' | 'exhausted' | 'gone'

// What the metrics learn of the webhooks' deliveries (src/webhooks/).
export interface WebhookObserver {
  attempted (event: string, outcome: WebhookOutcome): void
  // A message delivered, and how long after its change was committed.
  delivered (event: string, delaySeconds: number): void
}

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

  readonly #webhookAttempts = new Counter({
    name: 'plant_store_webhook_deliveries_total',
    help: 'Attempts to deliver a webhook, by event and outcome: delivered, failed (tried again later), ' +
      'exhausted (its last attempt failed: kept as failed) or gone (answered 410: the endpoint is disabled).',
    labelNames: ['event', 'outcome'],
    registers: [this.#registry],
  })

  readonly #webhookDelay = new Histogram({
    name: 'plant_store_webhook_delivery_delay_seconds',
    help: 'Time from the commit of a change to the delivery of its webhook, retries included, by event.',
    labelNames: ['event'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 86400],
    registers: [this.#registry],
  })

  #pendingWebhookMessages: () => Promise<number> = async () => 0
  readonly #webhookPending = new Gauge({
    name: 'plant_store_webhook_messages_pending',
    help: 'Webhook messages waiting for their first attempt or their next, over every enabled endpoint (read from the store at each scrape).',
    registers: [this.#registry],
    collect: async () => { this.#webhookPending.set(await this.#pendingWebhookMessages().catch(() => Number.NaN)) },
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

  // The webhook events' series exist from the start, at zero.
  observeWebhooks (events: readonly string[], pendingMessages: () => Promise<number>): WebhookObserver {
    this.#pendingWebhookMessages = pendingMessages
    const outcomes: readonly WebhookOutcome[] = ['delivered', 'failed', 'exhausted', 'gone']
    for (const event of events) {
      for (const outcome of outcomes) this.#webhookAttempts.labels(event, outcome).inc(0)
      this.#webhookDelay.zero({ event })
    }
    return {
      attempted: (event, outcome) => { this.#webhookAttempts.labels(event, outcome).inc() },
      delivered: (event, delaySeconds) => { this.#webhookDelay.labels(event).observe(delaySeconds) },
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

let processRegistry: Registry | undefined

// The process's own metrics (CPU, memory, event-loop delay, garbage collection), as prom-client
// collects them. They describe the process, not an app, and prom-client's collectors (an
// event-loop delay monitor, a garbage-collection observer) cannot be stopped: they are started
// once per process, however many apps it builds, into a registry every app's /metrics reads.
function processMetrics (): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}
