import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'
import { awaitOutput } from './await-output.js'
import { startScriptNodeOptions } from './start-script.js'

// The built service as an operator runs it: npm start's `node [options] dist/src/server.js`, configured by its
// environment. `npm test` builds it first.
export const serverScript = join(import.meta.dirname, '..', '..', 'dist', 'src', 'server.js')
// Node's arguments to run it: npm start's options, then the script.
export const serverArguments = [...startScriptNodeOptions(), serverScript]

export interface RunningServer {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly port: number
  readonly output: () => string
  readonly exited: Promise<number | null>
}

// Starts the service on a free port and waits for it to listen; it is killed when the test ends,
// and its output is shown then if the test failed.
export async function startServer (t: Test, environment: Record<string, string>): Promise<RunningServer> {
  t.ok(existsSync(serverScript), 'the service is built (npm test runs npm run build first)')
  const child = spawn(process.execPath, serverArguments, {
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'info', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  t.teardown(() => {
    child.kill('SIGKILL')
    if (!t.passing()) t.comment(`output of the service:\n${output}`)
  })

  const listening = await awaitOutput(child, () => output, /Server listening at (http:\/\/127\.0\.0\.1:(\d+))[;"]/, 'the service to start', 15_000)
  return { child, baseUrl: listening[1]!, port: Number(listening[2]), output: () => output, exited }
}

export async function createPlant (baseUrl: string, token: string, body: unknown): Promise<Response> {
  return fetch(`${baseUrl}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

// Registers a webhook endpoint for every event, as a consumer would.
export async function registerWebhookEndpoint (baseUrl: string, token: string, url: string): Promise<Response> {
  return fetch(`${baseUrl}/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  })
}

export async function listWebhookEndpoints (baseUrl: string, token: string): Promise<Response> {
  return fetch(`${baseUrl}/webhook-endpoints`, { headers: { authorization: `Bearer ${token}` } })
}
