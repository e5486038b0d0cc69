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
  // After a test file failed: its own YAML block (why it failed: an exit code, a signal, a
  // timeout) follows its result line, and is printed as it comes.
  #inFileBlock = false
  #fileFailed = false

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
    if (this.#inFileBlock) {
      this.#print(`      ${line}`)
      if (line === '  ...') this.#inFileBlock = false
      return
    }
    if (this.#fileFailed && line === '  ---') {
      this.#print(`      ${line}`)
      this.#inFileBlock = true
      return
    }
    this.#fileFailed = false
    // A line at the top level is a test file's result, or the run's counts.
    const fileResult = /^(not ok|ok) \d+ - (.*?)(?: # (.*))?$/.exec(line)
    if (fileResult !== null) {
      const [, outcome, name, directive = ''] = fileResult
      const time = /time=([\d.]+)ms/.exec(directive)
      const took = time === null ? '' : ` (${describeDuration(Number(time[1]))})`
      const note = /^(SKIP|TODO)/i.test(directive) ? ` # ${directive}` : ''
      this.#print(`${outcome === 'ok' ? 'pass' : 'FAIL'}  ${name}${took}${note}`)
      if (outcome === 'not ok') for (const failure of failuresOf(this.#fileLines)) this.#print(failure)
      this.#fileFailed = outcome === 'not ok'
      this.#fileLines = []
    } else if (/^# \{ total:|^# time=/.test(line)) {
      this.#print(line)
    } else {
      this.#fileLines.push(line)
    }
  }

  #print (line) {
    this.push(`${line.trimEnd()}\n`)
  }
}

function describeDuration (ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`
}

// Every failed assertion of a test file, at any depth, with the YAML block tap writes under it
// (what was expected, what was found, where, the diff) whole, blank lines included, after the
// comments its test wrote (the output of a service it started, for example).
function failuresOf (lines) {
  const shown = []
  let comments = []
  let failedIndent = -1
  let blockIndent = -1
  for (const line of lines) {
    const indent = line.length - line.trimStart().length
    if (blockIndent !== -1) {
      shown.push(`      ${line.slice(Math.min(failedIndent, indent))}`)
      if (indent === blockIndent && line.trim() === '...') blockIndent = -1
      continue
    }
    if (failedIndent !== -1 && line.trim() === '---' && indent > failedIndent) {
      shown.push(`      ${line.slice(failedIndent)}`)
      blockIndent = indent
      continue
    }
    failedIndent = -1
    if (/^\s*not ok /.test(line) && !/# (TODO|SKIP)/.test(line)) {
      shown.push(...comments.map((comment) => `      ${comment.trim()}`), `      ${line.trim()}`)
      comments = []
      failedIndent = indent
    } else if (/^\s*# /.test(line) && !/^\s*# (Subtest|time=)/.test(line)) {
      comments.push(line)
    } else if (/^\s*ok /.test(line)) {
      // A passing assertion: the comments before it were not a failure's.
      comments = []
    }
  }
  return shown
}
