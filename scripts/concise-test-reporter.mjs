// tap's reporter for `npm test`: a line per test file, what failed in full (each failed
// assertion with tap's account of it), and the counts; a few dozen lines where the raw TAP is
// thousands. It writes no terminal control codes, so it reads the same in a terminal, a pipe or
// a log file. CI asks for the raw TAP instead (`--reporter=tap`), and so can anyone.
import { Transform } from 'node:stream'

// tap pipes the raw TAP in, and what this passes on to its output.
export default class ConciseTestReporter extends Transform {
  #partialLine = ''
  // The raw lines of the test file being reported, printed only if it fails.
  #fileLines = []

  _transform (chunk, _encoding, done) {
    const lines = (this.#partialLine + chunk.toString()).split('\n')
    this.#partialLine = lines.pop()
    for (const line of lines) this.#readLine(line)
    done()
  }

  _flush (done) {
    if (this.#partialLine !== '') this.#readLine(this.#partialLine)
    done()
  }

  #readLine (line) {
    // A line at the top level is a test file's result, or the run's counts.
    const fileResult = /^(not ok|ok) \d+ - (.*?)(?: # (.*))?$/.exec(line)
    if (fileResult !== null) {
      const [, outcome, name, directive = ''] = fileResult
      const time = /time=([\d.]+)ms/.exec(directive)
      const took = time === null ? '' : ` (${describeDuration(Number(time[1]))})`
      const note = /^(SKIP|TODO)/i.test(directive) ? ` # ${directive}` : ''
      this.#print(`${outcome === 'ok' ? 'pass' : 'FAIL'}  ${name}${took}${note}`)
      if (outcome === 'not ok') for (const failure of failuresOf(this.#fileLines)) this.#print(failure)
      this.#fileLines = []
    } else if (/^# \{ total:|^# time=/.test(line)) {
      this.#print(line)
    } else {
      this.#fileLines.push(line)
    }
  }

  #print (line) {
    this.push(`${line}\n`)
  }
}

function describeDuration (ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`
}

// Every failed assertion of a test file, at any depth, with the YAML block tap writes under
// it (what was expected, what was found, where), and the lines the test logged.
function failuresOf (lines) {
  const shown = []
  let inFailure = false
  let failureIndent = 0
  for (const line of lines) {
    const indent = line.length - line.trimStart().length
    const failed = /^\s*not ok /.test(line) && !/# (TODO|SKIP)/.test(line)
    if (failed) {
      inFailure = true
      failureIndent = indent
      shown.push(`      ${line.trim()}`)
    } else if (inFailure && indent > failureIndent && line.trim() !== '') {
      shown.push(`      ${line.slice(failureIndent)}`)
    } else if (/^\s*# /.test(line) && !/^\s*# (Subtest|time=)/.test(line)) {
      // A test's comments (t.comment): the output of a service that failed, for example.
      inFailure = false
      shown.push(`      ${line.trim()}`)
    } else {
      inFailure = false
    }
  }
  return shown
}
