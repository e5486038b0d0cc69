import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import type { Test } from 'tap'
import { awaitOutput } from './await-output.js'
import { literalPattern } from './literal-pattern.js'

const projectRoot = join(import.meta.dirname, '..', '..')
const mockScript = join(projectRoot, 'scripts', 'mock.mjs')

// Starts `npm run mock` as that script runs it (`npm test` has built it) on `port`, with its
// arguments and environment, and waits for it to listen; it is killed when the test ends, and
// its output is shown then if the test failed. Resolves with its base URL.
export async function startMock (t: Test, port: number, how: { env?: Record<string, string>, args?: string[] }): Promise<string> {
  // Its own process group, so that Prism, its child, is stopped with it whatever happens.
  const child: ChildProcess = spawn(process.execPath, [mockScript, ...how.args ?? []], {
    cwd: projectRoot, env: { ...process.env, ...how.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  t.teardown(() => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL')
    if (!t.passing()) t.comment(`output of the mock:\n${output}`)
  })
  const baseUrl = `http://127.0.0.1:${port}`
  await awaitOutput(child, () => output, literalPattern(`Mock of openapi.yaml listening on ${baseUrl}\n`), 'the mock to start', 60_000)
  return baseUrl
}
