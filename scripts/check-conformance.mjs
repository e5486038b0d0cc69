// `npm run check:conformance -- --url <base URL> --token <token> [--write] [--max-examples <n>] [--verbose]`:
// does a deployed instance keep openapi.yaml? First the document it serves (GET /openapi.yaml)
// must be this checkout's openapi.yaml; then Schemathesis, installed and configured as for
// `npm run fuzz` (scripts/fuzz/), runs every check against it. By default only the operations that
// change nothing (GET, and HEAD where declared), so that it is safe on a live service; --write
// runs every operation and the stateful phase, for an instance that may be written to and thrown
// away. The token may come from PLANT_STORE_TOKEN instead, to keep it off the command line; it
// is never printed.
//
// Exit status: 0 conformant, 1 not (each failure named on one or two lines), 2 could not check
// (bad arguments, the instance unreachable, Schemathesis not installable or not finishing).
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { parse } from 'yaml'
import { summarizeEvents } from './conformance/schemathesis-events.mjs'
import { servedSpecDifferences } from './conformance/served-spec-differences.mjs'
import { installSchemathesis, schemathesisSettings } from './fuzz/install-schemathesis.mjs'

const projectRoot = fileURLToPath(new URL('..', import.meta.url))
const localSpecPath = join(projectRoot, 'openapi.yaml')
const usage = 'usage: npm run check:conformance -- --url <base URL> --token <token> [--write] [--max-examples <n>] [--verbose]'
// Schemathesis' own default: enough to find a wrong status or body, a minute or two per run.
const defaultMaxExamples = 100
const readOnlyMethods = ['get', 'head']
// The warnings of the pinned Schemathesis (scripts/fuzz/requirements.txt) that the read-only
// check fails on: all those `npm run fuzz` fails on but missing_test_data, which says the
// instance holds no plant for GET /plants/{id} to find. A live store may well be empty, and
// without --write nothing may be added to it.
const readOnlyWarnings = [
  'missing_auth', 'base_url_mismatch', 'validation_mismatch', 'missing_deserializer', 'unused_openapi_auth',
  'unsupported_regex', 'method_not_allowed', 'constants_extraction', 'unmatched_filter', 'unresolvable_reference',
  'rate_limited', 'dictionary_mismatch', 'timeout_units',
]
const exitStatus = { conformant: 0, notConformant: 1, couldNotCheck: 2 }

const say = (line = '') => process.stdout.write(`${line}\n`)
function stop (message) {
  process.stderr.write(`check:conformance could not check: ${message}\n`)
  process.exit(exitStatus.couldNotCheck)
}

const options = readOptions()
const localSpecText = readFileSync(localSpecPath, 'utf8')
const mode = options.write ? 'every operation, stateful phase included (--write)' : 'read-only operations'
say(`Conformance of ${options.url} with openapi.yaml: ${mode}, at most ${options.maxExamples} examples per operation and phase`)

const differences = servedSpecDifferences(await fetchServedSpec(options.url), localSpecText)
if (differences.length > 0) {
  say('FAIL the instance serves another document than openapi.yaml (Schemathesis not run):')
  for (const difference of differences) say(`  ${difference}`)
  process.exit(exitStatus.notConformant)
}
say('Served /openapi.yaml: the same document as openapi.yaml')

const executable = await installSchemathesis({
  onInstall: (folder) => process.stderr.write(`Installing Schemathesis into ${folder} (first run; a minute or two)...\n`),
}).catch((error) => stop(error.message))
process.exit(await runSchemathesis(executable))

function readOptions () {
  let values
  try {
    ({ values } = parseArgs({
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        write: { type: 'boolean', default: false },
        'max-examples': { type: 'string', default: String(defaultMaxExamples) },
        verbose: { type: 'boolean', default: false },
      },
    }))
  } catch (error) {
    stop(`${error.message}\n${usage}`)
  }
  const token = values.token ?? process.env.PLANT_STORE_TOKEN
  if (values.url === undefined || !URL.canParse(values.url) || !/^https?:$/.test(new URL(values.url).protocol)) {
    stop(`--url must be the instance's http or https base URL\n${usage}`)
  }
  if (token === undefined || token === '') stop(`--token (or PLANT_STORE_TOKEN) is required\n${usage}`)
  if (!/^[1-9]\d{0,5}$/.test(values['max-examples'])) stop(`--max-examples must be an integer from 1 to 999999\n${usage}`)
  return {
    url: values.url.replace(/\/+$/, ''),
    token,
    write: values.write,
    maxExamples: Number(values['max-examples']),
    verbose: values.verbose,
  }
}

// The document the instance serves at /openapi.yaml (which openapi.yaml declares), as text; an
// answer other than 200 is named as the difference.
async function fetchServedSpec (url) {
  let response
  try {
    response = await fetch(`${url}/openapi.yaml`, { signal: AbortSignal.timeout(15_000) })
  } catch (error) {
    stop(`GET ${url}/openapi.yaml: ${error.cause?.message ?? error.message}`)
  }
  const text = await response.text()
  if (response.status !== 200) {
    say(`FAIL GET /openapi.yaml answered ${response.status}, not the document: ${text.replace(/\s+/g, ' ').slice(0, 100)}`)
    process.exit(exitStatus.notConformant)
  }
  return text
}

async function runSchemathesis (executable) {
  const reportFolder = mkdtempSync(join(tmpdir(), 'check-conformance-'))
  const reportPath = join(reportFolder, 'events.ndjson')
  try {
    const { code, output } = await run(executable, schemathesisArguments(reportPath))
    let events
    try {
      events = summarizeEvents(readFileSync(reportPath, 'utf8'))
    } catch {
      stop(`Schemathesis exited ${code} without a report:\n${lastLines(output, 20)}`)
    }
    printSummary(events, warningsOf(output))
    if (code === 0 && events.failures.length === 0 && events.errors.length === 0) {
      say(`PASS ${events.cases} cases on ${events.operations.length} operations, every check`)
      return exitStatus.conformant
    }
    if (code !== 0 && code !== 1) stop(`Schemathesis exited ${code}:\n${lastLines(output, 20)}`)
    const failed = events.failures.length + events.errors.length
    const found = `${failed} ${failed === 1 ? 'failure' : 'failures'} in ${events.failingCases} of ${events.cases} cases`
    say(`FAIL ${failed === 0 ? 'Schemathesis failed the run (see the warnings above)' : found}` +
      `${options.verbose ? '' : '; --verbose shows Schemathesis\' own report, with a curl command for each'}`)
    return exitStatus.notConformant
  } finally {
    rmSync(reportFolder, { recursive: true, force: true })
  }
}

function schemathesisArguments (reportPath) {
  const common = [
    '--no-color', '--config-file', schemathesisSettings, 'run', localSpecPath,
    '--max-examples', String(options.maxExamples), '--report', 'ndjson', '--report-ndjson-path', reportPath,
  ]
  if (options.write) return common
  const declared = new Set(Object.values(parse(localSpecText).paths ?? {}).flatMap((pathItem) => Object.keys(pathItem)))
  return [
    ...common,
    ...readOnlyMethods.filter((method) => declared.has(method)).flatMap((method) => ['--include-method', method.toUpperCase()]),
    '--phases', 'examples,coverage,fuzzing',
    '--warnings', readOnlyWarnings.join(','),
  ]
}

// Runs Schemathesis with the instance and the token in its environment, where the settings read
// them (scripts/fuzz/schemathesis.toml), so that the token is in no command line.
function run (executable, args) {
  const environment = { ...process.env, PLANT_STORE_URL: options.url, PLANT_STORE_TOKEN: options.token }
  // Schemathesis' console library takes FORCE_COLOR=0 as a terminal to draw progress bars on.
  delete environment.FORCE_COLOR
  return new Promise((resolve) => {
    const child = spawn(executable, args, { cwd: projectRoot, env: environment, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    const keep = (text) => {
      output += text
      if (options.verbose) process.stderr.write(withoutToken(text))
    }
    child.stdout.setEncoding('utf8').on('data', keep)
    child.stderr.setEncoding('utf8').on('data', keep)
    child.on('error', (error) => stop(`${executable}: ${error.message}`))
    child.on('close', (code, signal) => resolve({ code: code ?? signal, output: withoutToken(output) }))
  })
}

function printSummary ({ operations, cases, failures, errors }, warnings) {
  say(`Operations checked (${operations.length}): ${operations.join(', ')}`)
  say(`Cases run: ${cases}`)
  for (const failure of failures) {
    const times = failure.count === 1 ? '' : ` (${failure.count} cases)`
    say(`FAIL ${failure.operation} ${failure.check}: ${failure.title}${failure.message === '' ? '' : `: ${failure.message}`}${times}`)
    if (failure.request !== undefined) say(`     ${failure.request} answered ${failure.status ?? 'nothing'} ${failure.body ?? ''}`.trimEnd())
  }
  for (const error of errors) say(`ERROR ${error}`)
  for (const warning of warnings) say(`WARNING ${warning}`)
}

// The warnings of Schemathesis' summary, one line each (the NDJSON report holds none).
function warningsOf (output) {
  const block = /^Warnings:\n((?: {2}.*\n)+)/m.exec(output)?.[1] ?? ''
  return block.split('\n').map((line) => line.replace(/^\s*⚠️\s*/, '').trim()).filter((line) => line !== '')
}

function withoutToken (text) {
  return text.replaceAll(options.token, '[token]')
}

function lastLines (text, count) {
  return text.trimEnd().split('\n').slice(-count).join('\n')
}
