import { Webhook } from 'standardwebhooks'
import type { Test } from 'tap'
import { assertWebhookMatchesSpec } from './contract.js'
import type { TestApp } from './helper.js'
import { testToken } from './helper.js'
import type { ReceivedWebhook } from './webhook-receiver.js'

export const asManager = { authorization: `Bearer ${testToken}` }
export const asManagerWithJson = { ...asManager, 'content-type': 'application/json' }

// The settings of a test that sends webhooks: to the loopback address alone (no name is even
// resolved), retried within a second.
export const webhookTestSettings = { WEBHOOK_ALLOW_LOOPBACK: 'only', WEBHOOK_RETRY_SCHEDULE: '0,0.2,0.2' } as const

export interface RegisteredEndpoint {
  readonly id: string
  readonly secret: string
}

export async function registerEndpoint (t: Test, app: TestApp, url: string, events?: string[]): Promise<RegisteredEndpoint> {
  const answer = await app.send({
    method: 'POST', url: '/webhook-endpoints', headers: asManagerWithJson, payload: JSON.stringify(events === undefined ? { url } : { url, events }),
  })
  t.equal(answer.statusCode, 201, `${url} is registered`)
  return answer.body as RegisteredEndpoint
}

// Checks a delivery as a receiver would, with the Standard Webhooks library (written elsewhere),
// and against openapi.yaml; returns its body.
export function verifiedDelivery (t: Test, delivery: ReceivedWebhook, secret: string): { type: string, timestamp: string, data: Record<string, unknown> } {
  const headers = Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name, String(value)]))
  t.doesNotThrow(() => new Webhook(secret).verify(delivery.body, headers), 'the signature verifies with standardwebhooks')
  const body = JSON.parse(delivery.body) as { type: string, timestamp: string, data: Record<string, unknown> }
  assertWebhookMatchesSpec(t, body.type, delivery.headers, delivery.body)
  return body
}
