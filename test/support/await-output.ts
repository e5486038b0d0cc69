import type { ChildProcess } from 'node:child_process'

// Polls a child process's output until `pattern` matches it, and resolves with the match. Rejects,
// with the output so far, once `limitMs` have passed or the process has exited without it.
// `waitingFor` names what the match means, for that message ("the service to start").
export async function awaitOutput (
  child: ChildProcess, output: () => string, pattern: RegExp, waitingFor: string, limitMs: number
): Promise<RegExpExecArray> {
  const deadline = Date.now() + limitMs
  for (;;) {
    const match = pattern.exec(output())
    if (match !== null) return match
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      throw new Error(`waited in vain for ${waitingFor}; its output:\n${output()}`)
    }
    // Short: a test that sends once the service has logged something sends soon after.
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}
