import { request } from 'node:http'

export interface HealthProbe {
  readonly stop: () => Promise<HealthProbeResult>
}

export interface HealthProbeResult {
  readonly answered: number
  readonly failed: number
  readonly slowestMs: number
}

// A load balancer's view: GET /healthz on a new connection every `intervalMs`, each timed from
// the moment it is sent to the end of its answer.
export function probeHealth (port: number, intervalMs = 50, timeoutMs = 5000): HealthProbe {
  let answered = 0
  let failed = 0
  let slowestMs = 0
  const inFlight = new Set<Promise<void>>()
  const probeOnce = (): void => {
    const started = performance.now()
    const done = new Promise<void>((resolve) => {
      const probe = request({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: timeoutMs }, (response) => {
        response.resume()
        response.on('end', () => {
          slowestMs = Math.max(slowestMs, performance.now() - started)
          if (response.statusCode === 200) answered += 1
          else failed += 1
          resolve()
        })
      })
      probe.on('timeout', () => probe.destroy(new Error('timed out')))
      probe.on('error', () => {
        failed += 1
        slowestMs = Math.max(slowestMs, performance.now() - started)
        resolve()
      })
      probe.end()
    })
    inFlight.add(done)
    void done.then(() => inFlight.delete(done))
  }
  const timer = setInterval(probeOnce, intervalMs)
  probeOnce()
  return {
    stop: async () => {
      clearInterval(timer)
      await Promise.all(inFlight)
      return { answered, failed, slowestMs }
    },
  }
}
