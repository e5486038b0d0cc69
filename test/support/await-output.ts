import type { ChildProcess } from 'node:child_process'

// Waits until `pattern` matches a child process's output, and resolves with the match. Rejects,
// with the output so far, once `limitMs` have passed or the process's output has ended without
// it (its 'close': the process has exited, and so has every process it gave its pipes to).
// `waitingFor` names what the match means, for that message ("the service to start").
// `output` must be fed by listeners on the child's stdout and stderr added before this is
// called: the output is looked at again each time the child writes, after those listeners ran.
export async function awaitOutput (
  child: ChildProcess, output: () => string, pattern: RegExp, waitingFor: string, limitMs: number
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const settled = (): void => {
      clearTimeout(timer)
      child.stdout?.off('data', lookAgain)
      child.stderr?.off('data', lookAgain)
      child.off('close', lookLastTime)
    }
    const matched = (): boolean => {
      const match = pattern.exec(output())
      if (match === null) return false
      settled()
      resolve(match)
      return true
    }
    const fail = (): void => {
      settled()
      reject(new Error(`waited in vain for ${waitingFor}; its output:\n${output()}`))
    }
    const lookAgain = (): void => { matched() }
    // 'close' comes once the child has exited and its output has been read to the end.
    const lookLastTime = (): void => { if (!matched()) fail() }
    const timer = setTimeout(lookLastTime, limitMs)
    if (matched()) return
    const outputEnded = (child.stdout?.closed ?? true) && (child.stderr?.closed ?? true)
    if (outputEnded && (child.exitCode !== null || child.signalCode !== null)) {
      fail()
      return
    }
    child.stdout?.on('data', lookAgain)
    child.stderr?.on('data', lookAgain)
    child.once('close', lookLastTime)
  })
}
