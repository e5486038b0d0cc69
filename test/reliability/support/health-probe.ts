import { request } from 'node:http'

export interface HealthProbe {
  readonly stop: () => Promise<HealthProbeResult>
}

export interface HealthProbeResult {
  readonly answered: number
  readonly failed: number
  readonly slowestMs: number
  // The time 99 probes in 100 were answered within.
  readonly p99Ms: number
}

// A load balancer's view: GET /healthz on a new connection every `intervalMs`, each timed from
// the moment it is sent to the end of its answer.
export function probeHealth (port: number, intervalMs = 50, timeoutMs = 5000): HealthProbe {
  let answered = 0
  let failed = 0
  const times: number[] = []
  const inFlight = new Set<Promise<void>>()
  const probeOnce = (): void => {
    const started = performance.now()
    const done = new Promise<void>((resolve) => {
      const probe = request({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: timeoutMs }, (response) => {
        response.resume()
        response.on('end', () => {
          times.push(performance.now() - started)
          if (response.statusCode === 200) answered += 1
          else failed += 1
          resolve()
        })
      })
      probe.on('timeout', () => probe.destroy(new Error('timed out')))
      probe.on('error', () => {
        failed += 1
        times.push(performance.now() - started)
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
      times.sort((a, b) => a - b)
      const within = (share: number): number => times[Math.max(0, Math.ceil(share * times.length) - 1)] ?? 0
      return { answered, failed, slowestMs: within(1), p99Ms: within(0.99) }
    },
  }
}
