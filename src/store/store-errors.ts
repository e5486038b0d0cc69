// The backend could not serve the request for now (busy, locked, unreachable, disk full); the
// same request may succeed later. The cause is kept for the logs, never for the response.
export class StoreUnavailableError extends Error {
  constructor (readonly retryAfterSeconds: number, options?: { cause: unknown }) {
    super('the store is unavailable; retry later', options)
    this.name = 'StoreUnavailableError'
  }
}

// The error a store rejects with: a failure its backend calls transient becomes a
// StoreUnavailableError (a 503 with Retry-After), and any other stays what it is (a 500).
export function translateStoreError (error: unknown, isTransient: (error: unknown) => boolean): unknown {
  return isTransient(error) ? new StoreUnavailableError(1, { cause: error }) : error
}
