import { type ChildProcess, spawn } from 'node:child_process'
import { accessSync, constants, readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { Test } from 'tap'
import { awaitOutput } from '../../support/await-output.js'
import { serverArguments } from '../../support/running-server.js'

// The service under strace, which logs the system calls that write, send and sync: enough to
// see in which order a commit reached the disk and its answers left for the clients.
export const tracedCalls = ['write', 'writev', 'pwrite64', 'pwritev', 'pwritev2', 'sendto', 'sendmsg', 'fsync', 'fdatasync']

const strace = onPath('strace')

// A developer without strace sees the test skipped with this reason; CI sets CI=true and
// installs strace, so there a missing strace fails the test instead.
export const straceSkipReason: string | false = process.env.CI === 'true' || strace !== undefined
  ? false
  : 'strace is not installed; install the strace package to run this test'

function onPath (command: string): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(folder, command), constants.X_OK)
      return join(folder, command)
    } catch {}
  }
  return undefined
}

export interface TracedServer {
  readonly baseUrl: string
  // Stops the service with SIGTERM, waits for strace to write its last line, and returns the log.
  readonly stop: () => Promise<string>
}

// Started as startServer starts it, under strace: -f follows every thread, -y names the file
// behind each descriptor (the WAL, a socket), -s 32 shows enough of each write to tell a 200.
export async function startTracedServer (t: Test, environment: Record<string, string>, traceFile: string): Promise<TracedServer> {
  if (strace === undefined) throw new Error('strace is not installed: install the strace package')
  const child = spawn(strace, [
    '-f', '-tt', '-y', '-s', '32', '-e', `trace=${tracedCalls.join(',')}`, '-o', traceFile,
    process.execPath, ...serverArguments,
  ], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'info', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const service: { pid?: number } = {}
  // Killing strace alone would leave the service running, detached: the service goes first.
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) {
      if (service.pid !== undefined) killQuietly(service.pid)
      child.kill('SIGKILL')
    }
    if (!t.passing()) t.comment(`output of strace and the service:\n${output}`)
  })

  const listening = await waitForListening(child, () => output)
  service.pid = listening.pid
  return {
    baseUrl: listening.baseUrl,
    stop: async () => {
      process.kill(listening.pid, 'SIGTERM')
      // A graceful stop takes well under a second; one that hangs must not hang the test.
      const killLater = setTimeout(() => killQuietly(listening.pid), 20_000)
      await exited
      clearTimeout(killLater)
      return readFileSync(traceFile, 'utf8')
    },
  }
}

// Under ptrace the service starts several times slower than it does alone.
async function waitForListening (child: ChildProcess, output: () => string): Promise<{ baseUrl: string, pid: number }> {
  const listening = await awaitOutput(child, output, /"pid":(\d+).*"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)[;"]/, 'the service to start under strace', 60_000)
  return { pid: Number(listening[1]), baseUrl: listening[2]! }
}

function killQuietly (pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {} // it has exited already
}
