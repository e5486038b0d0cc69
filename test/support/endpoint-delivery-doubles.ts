import type { DueWebhookMessage, LeasedWebhookEndpoint, MessagePosition, WebhookStore } from '../../src/store/webhook-store.js'
import { DeliveryPacer } from '../../src/webhooks/delivery-pacer.js'
import type { DeliveryServices } from '../../src/webhooks/endpoint-delivery.js'
import { EndpointUrlPolicy } from '../../src/endpoint-urls/endpoint-url-policy.js'
import { RetrySchedule } from '../../src/webhooks/retry-schedule.js'
import { newSigningSecret } from '../../src/webhooks/webhook-request.js'
import type { WebhookReceiver } from './webhook-receiver.js'

// An outbox in memory that counts its reads and records its deletions: what an endpoint's
// delivery asks of the store, for tests of the delivery's own logic (the stores themselves are
// tested on SQLite and PostgreSQL). While `refusingDeletions`, a deletion fails as a store's would.
export class CountingOutbox {
  reads = 0
  refusingDeletions = false
  readonly deletions: Array<readonly number[]> = []
  private messages: DueWebhookMessage[] = []
  private nextSeq = 1

  add (): void {
    const seq = this.nextSeq++
    this.messages.push(dueMessage(seq, `msg_${seq}`))
  }

  // The messages still in the outbox, by seq.
  get waiting (): number[] {
    return this.messages.map(({ seq }) => seq)
  }

  readonly store = {
    dueMessages: async (_endpointId: string, _now: number, after: MessagePosition, limit: number) => {
      this.reads++
      return this.messages.filter(({ seq }) => seq > after.seq).slice(0, limit)
    },
    deleteMessages: async (_endpointId: string, seqs: readonly number[]) => {
      this.deletions.push([...seqs])
      if (this.refusingDeletions) throw new Error('the store refuses the deletion')
      const delivered = new Set(seqs)
      this.messages = this.messages.filter(({ seq }) => !delivered.has(seq))
    },
  } as unknown as WebhookStore
}

// A newPlant message due at once, never attempted.
export function dueMessage (seq: number, messageId: string): DueWebhookMessage {
  return { seq, messageId, event: 'newPlant', plant: { id: BigInt(seq), document: '{"name":"Fern"}' }, traceparent: null, committedAt: 0, attempts: 0, nextAttemptAt: 0 }
}

// What every delivery of these tests shares, with what a test sets itself.
export function deliveryServices (store: WebhookStore, settings: Partial<DeliveryServices> = {}): DeliveryServices {
  return {
    store,
    schedule: new RetrySchedule('0'),
    policy: new EndpointUrlPolicy('only'),
    timeoutMs: 10_000,
    disableAfterMs: 60_000,
    observer: undefined,
    traceDelivery: () => undefined,
    pacer: new DeliveryPacer(),
    outboxCommitsHere: () => 0,
    ...settings,
  }
}

// An endpoint at the receiver as a lease hands it over: healthy unless `health` says otherwise.
export function endpointAt (receiver: WebhookReceiver, health: Partial<LeasedWebhookEndpoint> = {}): LeasedWebhookEndpoint {
  return { id: 'endpoint', url: receiver.url, secret: newSigningSecret(), previousSecret: null, previousSecretUntil: null, failingSince: null, failuresInARow: 0, restingUntil: null, ...health }
}
