import { collectDefaultMetrics, Registry } from 'prom-client'

let processRegistry: Registry | undefined

// The process's own metrics (CPU, memory, event-loop delay, garbage collection), as prom-client
// collects them. They describe the process, not an app, and prom-client's collectors (an
// event-loop delay monitor, a garbage-collection observer) cannot be stopped: they are started
// once per process, however many apps it builds, into a registry every app's /metrics reads.
export function processMetrics (): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}
