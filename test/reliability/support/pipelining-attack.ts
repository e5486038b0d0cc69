import { spawn } from 'node:child_process'
import { join } from 'node:path'

export interface PipeliningAttack {
  readonly connections: number
  readonly requestsPerConnection: number
  readonly request: string
  // How long the attacking connections are held open, never reading an answer.
  readonly holdMs: number
}

const attacker = join(import.meta.dirname, 'pipelining-attacker.ts')

export interface StartedAttack {
  // Starts the attack; resolves when the attacker has let its connections go.
  readonly run: () => Promise<void>
}

// The attacker, started in a process of its own with the test's TypeScript loader
// (process.execArgv) and waiting for run().
export async function prepareAttack (port: number, attack: PipeliningAttack): Promise<StartedAttack> {
  const child = spawn(process.execPath, [
    ...process.execArgv, attacker, String(port), String(attack.connections), String(attack.requestsPerConnection),
    JSON.stringify(attack.request), String(attack.holdMs),
  ], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve())
    void exited.then((code) => reject(new Error(`the attacking process exited with ${code} before it was ready`)))
  })
  return {
    run: async () => {
      child.stdin.end('go\n')
      const code = await exited
      if (code !== 0) throw new Error(`the attacking process exited with ${code}`)
    },
  }
}

export function pipelinedGet (path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
}
