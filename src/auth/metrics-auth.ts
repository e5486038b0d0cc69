import { createApiTokenVerifier } from './api-token-verifier.js'
import { ConnectionCredentials } from './connection-credentials.js'
import { type SecurityHandler, securityHandlerOf } from './token-verifier.js'

// METRICS_TOKEN, asked by GET /metrics itself (src/handlers/metrics.ts), compared as the tokens
// of API_TOKENS are (in constant time, refused with the same RFC 6750 answers); without it,
// /metrics is open.
export function createMetricsAuth (metricsToken: string): SecurityHandler {
  if (metricsToken === '') {
    return function metricsAreOpen (_request, _reply, done) {
      done()
    }
  }
  return securityHandlerOf(createApiTokenVerifier([metricsToken], 'metrics-token'), new ConnectionCredentials())
}
