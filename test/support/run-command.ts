import { execFile, type ExecFileOptions } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface CommandResult {
  // The exit code; null when the command was stopped by a signal (its timeout, say).
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

// Runs a command to its end and says how it ended: a failing command is a result to assert
// on, not an exception. A command stopped by a signal says so at the end of its stderr.
export async function runCommand (file: string, args: readonly string[], options: ExecFileOptions & { timeout: number }): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await run(file, args, { ...options, encoding: 'utf8' })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const { code = null, stdout = '', stderr = '', signal } = error as Partial<CommandResult> & { signal?: string | null }
    const stopped = signal === undefined || signal === null ? '' : `\n(stopped by ${signal} after ${options.timeout} ms)`
    return { code: typeof code === 'number' ? code : null, stdout, stderr: stderr + stopped }
  }
}
