import { get } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'

// Polls GET /readyz as a load balancer would, until it answers 200; resolves with the time
// that took. A connection of its own each time, so no pooled connection outlives the test.
export async function waitUntilReady (baseUrl: string, timeoutMs = 30_000): Promise<number> {
  const started = Date.now()
  let lastStatus = 'no answer yet'
  while (Date.now() - started < timeoutMs) {
    lastStatus = await readinessStatus(baseUrl)
    if (lastStatus === '200') return Date.now() - started
    await sleep(50)
  }
  throw new Error(`GET /readyz did not answer 200 within ${timeoutMs} ms (last: ${lastStatus})`)
}

async function readinessStatus (baseUrl: string): Promise<string> {
  return new Promise((resolve) => {
    const request = get(`${baseUrl}/readyz`, { agent: false, timeout: 5000 }, (response) => {
      response.resume()
      response.on('end', () => resolve(String(response.statusCode)))
      response.on('error', (error) => resolve(error.message))
    })
    request.on('timeout', () => request.destroy(new Error('no answer within 5 s')))
    request.on('error', (error) => resolve(error.message))
  })
}
