import { readFileSync } from 'node:fs'

// Resident memory of a process, from /proc (Linux), in MiB.
export function residentMiB (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kibibytes = /VmRSS:\s+(\d+) kB/.exec(status)?.[1]
  if (kibibytes === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`)
  return Number(kibibytes) / 1024
}

export interface MemoryWatch {
  readonly stop: () => { readonly peakMiB: number, readonly samples: number }
}

// Samples a process's resident memory every `intervalMs` until stopped and keeps the peak.
export function watchMemory (pid: number, intervalMs = 50): MemoryWatch {
  let peakMiB = residentMiB(pid)
  let samples = 1
  const timer = setInterval(() => {
    try {
      peakMiB = Math.max(peakMiB, residentMiB(pid))
      samples += 1
    } catch {
      // The process ended: the peak so far stands.
    }
  }, intervalMs)
  return {
    stop: () => {
      clearInterval(timer)
      return { peakMiB, samples }
    },
  }
}
