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

// The attack from a process of its own, with the test's TypeScript loader (process.execArgv).
export async function runPipeliningAttack (port: number, attack: PipeliningAttack): Promise<void> {
  const child = spawn(process.execPath, [
    ...process.execArgv, attacker, String(port), String(attack.connections), String(attack.requestsPerConnection),
    JSON.stringify(attack.request), String(attack.holdMs),
  ], { stdio: ['ignore', 'ignore', 'inherit'] })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  if (code !== 0) throw new Error(`the attacking process exited with ${code}`)
}

export function pipelinedGet (path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
}
