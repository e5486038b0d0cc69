import { type ChildProcess, spawn } from 'node:child_process'
import { openSync, readFileSync, closeSync } from 'node:fs'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../test/support/free-port.js'

export interface ServerProcess {
  readonly baseUrl: string
  readonly pid: number
  // Resident memory now, in MiB, read from /proc.
  readonly residentMemoryMiB: () => number
  // CPU time the process has used so far (user and system), in seconds, read from /proc.
  readonly cpuSeconds: () => number
  readonly stop: () => Promise<void>
}

// Every started process, so that none outlives the benchmark, however it ends.
const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

// Starts `node <script>` listening on a free port of 127.0.0.1 given as PORT, with its output
// going to logFile (as a deployed service's would, and so that reading it costs the load
// generator nothing), and waits until the port accepts connections.
export async function startServerProcess (
  script: string, environment: Record<string, string>, logFile: string, nodeOptions: readonly string[] = [],
  nodeBinary = process.execPath
): Promise<ServerProcess> {
  // A PORT of the environment's own (a receiver started again where its endpoint points), or a free one.
  const port = environment.PORT === undefined ? await freePort() : Number(environment.PORT)
  const log = openSync(logFile, 'w')
  const child = spawn(nodeBinary, [...nodeOptions, script], {
    env: { PATH: process.env.PATH ?? '', ...environment, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', log, log],
  })
  closeSync(log)
  running.add(child)
  child.on('exit', () => running.delete(child))

  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    if (child.pid !== undefined && await acceptsConnections(port)) {
      const pid = child.pid
      return {
        baseUrl: `http://127.0.0.1:${port}`,
        pid,
        residentMemoryMiB: () => residentMemoryMiB(pid),
        cpuSeconds: () => cpuSeconds(pid),
        stop: async () => stopProcess(child),
      }
    }
    if (child.exitCode !== null) break
    await sleep(50)
  }
  child.kill('SIGKILL')
  throw new Error(`${script} did not start; its output:\n${readFileSync(logFile, 'utf8')}`)
}

async function acceptsConnections (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

function residentMemoryMiB (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`)
  return Number(kib) / 1024
}

// Fields 14 and 15 of /proc/<pid>/stat (utime, stime) count clock ticks, which Linux reports
// at 100 a second whatever the kernel's own tick rate. The process name (field 2) may hold
// spaces, so fields are counted from the parenthesis that closes it.
const clockTicksPerSecond = 100

function cpuSeconds (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fieldsAfterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const [userTicks, systemTicks] = [Number(fieldsAfterName[11]), Number(fieldsAfterName[12])]
  if (!Number.isFinite(userTicks) || !Number.isFinite(systemTicks)) throw new Error(`no CPU times for process ${pid}`)
  return (userTicks + systemTicks) / clockTicksPerSecond
}

async function stopProcess (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const stoppedInTime = await Promise.race([exited.then(() => true), sleep(15_000, false)])
  if (!stoppedInTime) {
    child.kill('SIGKILL')
    await exited
  }
}
