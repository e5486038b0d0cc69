import { type ApiError, UnknownWebhookEventError, WebhookUrlRefusedError } from '../errors/api-errors.js'
import { EndpointUrlPolicy, RefusedUrlError } from './endpoint-url-policy.js'

// What the request validator found wrong with a webhook endpoint's body (NewWebhookEndpoint),
// where its schema states a check the service makes itself, so that the refusal has that check's
// code and reason rather than a bare schema mismatch: a URL its pattern refuses (40008, saying
// why: a private address, credentials, a fragment, ...), an event its list does not name (40009).
export interface SchemaProblem {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
}

const subscribedEvent = /^\/events\/(\d+)$/
// The policy as the spec states it: no loopback. (Where WEBHOOK_ALLOW_LOOPBACK allows loopback,
// the URL's pattern is not validated, and the endpoint's own policy judges it: see
// withLoopbackWebhookUrls.)
const statedPolicy = new EndpointUrlPolicy('false')

export function endpointBodyRefusal (problem: SchemaProblem, body: unknown): ApiError | undefined {
  const { url, events } = (typeof body === 'object' && body !== null ? body : {}) as { url?: unknown, events?: unknown }
  if (problem.instancePath === '/url' && problem.keyword === 'pattern' && typeof url === 'string') {
    return new WebhookUrlRefusedError(urlRefusalReason(url))
  }
  const subscribed = problem.keyword === 'enum' ? subscribedEvent.exec(problem.instancePath) : null
  const named = subscribed !== null && Array.isArray(events) ? events[Number(subscribed[1])] : undefined
  if (typeof named === 'string') return new UnknownWebhookEventError([named], (problem.params.allowedValues as unknown[]).map(String))
  return undefined
}

function urlRefusalReason (url: string): string {
  try {
    statedPolicy.check(url)
  } catch (error) {
    if (error instanceof RefusedUrlError) return error.message
    throw error
  }
  // The pattern is narrower than the policy in a few forms a webhook URL has no need of (a label
  // that begins or ends with `-` or is `xn--`, an IPv4 address with a trailing dot or leading
  // zeros, 6to4 IPv6, a port with leading zeros, what a URI cannot hold): it says which it takes.
  return 'it must be https:// and a host name (letters, digits, - and _, no xn-- label), a public IPv4 address in dotted decimal or a public IPv6 address in brackets (not 6to4), with a port from 1 to 65535 without leading zeros, URI characters only, and no credentials or fragment'
}

// The document the requests are validated against where WEBHOOK_ALLOW_LOOPBACK allows loopback
// endpoints (development and tests): NewWebhookEndpoint's url without the pattern that refuses
// them, so that the policy, which knows the setting, judges the URL. The document served is
// openapi.yaml as it is.
export function withLoopbackWebhookUrls<T> (document: T): T {
  const copy = structuredClone(document) as { components?: { schemas?: { NewWebhookEndpoint?: { properties?: { url?: { pattern?: string } } } } } }
  const url = copy.components?.schemas?.NewWebhookEndpoint?.properties?.url
  if (url?.pattern === undefined) throw new Error('openapi.yaml: components.schemas.NewWebhookEndpoint.properties.url has no pattern')
  delete url.pattern
  return copy as T
}
