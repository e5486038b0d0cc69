import { randomUUID } from 'node:crypto'
import type { Config } from '../config/config.js'
import { UnknownWebhookEventError, WebhookUrlRefusedError } from '../errors/api-errors.js'
import type { Observability } from '../observability/observability.js'
import type { OpenApiDocument } from '../openapi/openapi-document.js'
import { webhookDefinitions } from '../openapi/webhook-definitions.js'
import type { PlantStore } from '../store/plant-store.js'
import type { WebhookEndpointSummary } from '../store/webhook-store.js'
import type { RequestLoad } from '../http/connection-guard.js'
import { type CpuTime, DeliveryPacer } from './delivery-pacer.js'
import { EndpointUrlPolicy, RefusedUrlError, type ResolveHost } from '../endpoint-urls/endpoint-url-policy.js'
import { RetrySchedule } from './retry-schedule.js'
import { type DispatcherLogger, WebhookDispatcher } from './webhook-dispatcher.js'
import { WebhookOutbox } from './webhook-outbox.js'
import { newSigningSecret } from './webhook-request.js'

export type WebhookSettings = Pick<Config,
  'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_ALLOW_LOOPBACK' | 'WEBHOOK_TIMEOUT' | 'WEBHOOK_DISABLE_AFTER' | 'WEBHOOK_DELIVERIES'>

export interface WebhooksOptions {
  readonly document: OpenApiDocument
  readonly store: PlantStore
  readonly settings: WebhookSettings
  readonly observability: Observability
  readonly logger: DispatcherLogger
  // The system resolver by default; tests bring their own.
  readonly resolveHost?: ResolveHost | undefined
  // The requests the server is answering, which deliveries give way to when the service is
  // saturated (none when requests are injected), and the CPU time the process has used (Node's
  // figure by default).
  readonly requestLoad?: RequestLoad | undefined
  readonly cpuTime?: CpuTime | undefined
}

// After a rotation, the previous secret signs too for this long.
const previousSecretLifetimeMs = 24 * 60 * 60 * 1000

// The webhooks of openapi.yaml, sent from the store's outbox to the endpoints consumers register:
// what the endpoints' operations change, and the delivery that runs while the app does.
export class Webhooks {
  readonly eventNames: readonly string[]
  private readonly delivers: boolean
  private readonly policy: EndpointUrlPolicy
  private readonly outbox: WebhookOutbox
  private readonly dispatcher: WebhookDispatcher

  constructor ({ document, store, settings, observability, logger, resolveHost, requestLoad, cpuTime }: WebhooksOptions) {
    const definitions = webhookDefinitions(document)
    this.eventNames = definitions.map(({ name }) => name)
    this.delivers = settings.WEBHOOK_DELIVERIES === 'on'
    const schedule = new RetrySchedule(settings.WEBHOOK_RETRY_SCHEDULE)
    this.policy = new EndpointUrlPolicy(settings.WEBHOOK_ALLOW_LOOPBACK, resolveHost)
    const pacer = new DeliveryPacer(requestLoad, cpuTime)
    // Told as a batch commits, before its writes are answered: the round runs after, so that the
    // answers go first. The count tells the deliveries that messages may have been committed
    // since they last found none (src/webhooks/endpoint-delivery.ts).
    let nudgeScheduled = false
    let outboxCommits = 0
    this.outbox = new WebhookOutbox(definitions, schedule, () => {
      outboxCommits++
      if (nudgeScheduled) return
      nudgeScheduled = true
      setImmediate(() => {
        nudgeScheduled = false
        this.dispatcher.nudge()
      })
    })
    this.dispatcher = new WebhookDispatcher(store.webhooks, this.outbox, {
      store: store.webhooks,
      schedule,
      policy: this.policy,
      timeoutMs: settings.WEBHOOK_TIMEOUT * 1000,
      disableAfterMs: settings.WEBHOOK_DISABLE_AFTER * 1000,
      observer: observability.metrics?.observeWebhooks(this.eventNames, async () => store.webhooks.pendingMessages()),
      traceDelivery: (event, causedBy) => observability.traceDelivery(event, causedBy),
      pacer,
      outboxCommitsHere: () => outboxCommits,
    }, logger)
    store.useOutbox(this.outbox)
    this.store = store
  }

  private readonly store: PlantStore

  // With WEBHOOK_DELIVERIES=off this instance sends nothing: what its writes owe stays in the
  // outbox for an instance that delivers.
  start (): void {
    if (this.delivers) this.dispatcher.start()
  }

  async stop (): Promise<void> {
    if (this.delivers) await this.dispatcher.stop()
  }

  // Registers the endpoint, in effect on this instance for every change committed after it
  // returns. Refuses a URL the policy refuses, and an event openapi.yaml does not declare.
  async register (url: string, events: readonly string[] | undefined): Promise<{ endpoint: WebhookEndpointSummary, secret: string }> {
    const unknown = (events ?? []).filter((event) => !this.eventNames.includes(event))
    if (unknown.length > 0) throw new UnknownWebhookEventError(unknown, this.eventNames)
    try {
      this.policy.check(url)
    } catch (error) {
      if (error instanceof RefusedUrlError) throw new WebhookUrlRefusedError(error.message)
      throw error
    }
    const endpoint = { id: randomUUID(), url, events: events ?? null, secret: newSigningSecret(), createdAt: Date.now() }
    await this.store.webhooks.createEndpoint(endpoint)
    await this.changed()
    return {
      endpoint: { ...endpoint, disabledAt: null, disabledReason: null, lastFailureAt: null, lastFailureReason: null, pendingMessages: 0, failedMessages: 0 },
      secret: endpoint.secret,
    }
  }

  async list (): Promise<WebhookEndpointSummary[]> {
    return this.store.webhooks.listEndpoints()
  }

  // false when no endpoint has the id.
  async delete (id: string): Promise<boolean> {
    const deleted = await this.store.webhooks.deleteEndpoint(id)
    if (deleted) await this.changed()
    return deleted
  }

  // The new secret, and until when the previous one signs too; undefined when no endpoint has the id.
  async rotateSecret (id: string): Promise<{ secret: string, previousSecretExpiresAt: number } | undefined> {
    const secret = newSigningSecret()
    const previousSecretExpiresAt = Date.now() + previousSecretLifetimeMs
    if (!await this.store.webhooks.rotateSecret(id, secret, previousSecretExpiresAt)) return undefined
    await this.changed()
    return { secret, previousSecretExpiresAt }
  }

  // The outbox learns the endpoints at once, so that the next change committed here is sent to
  // a new endpoint, and the dispatcher renews its leases (a new secret signs from now on).
  private async changed (): Promise<void> {
    // An instance that does not deliver keeps the outbox's default, every webhook wanted (the
    // store writes a message only where an endpoint subscribes): only the dispatcher's rounds
    // would widen a narrowed set again once another instance registers an endpoint.
    if (!this.delivers) return
    this.outbox.update(await this.store.webhooks.subscriptions())
    this.dispatcher.refresh()
  }
}
