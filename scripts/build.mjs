// `npm run build`, which `npm start`, `npm run token`, `npm run mock` and `npm test` run first:
//  1. generated/openapi.d.ts from openapi.yaml (scripts/generate-types.mjs), when the spec or its
//     generator changed since the types were written, once the names of the webhooks an endpoint
//     can subscribe to are the spec's webhooks (scripts/webhook-names-listed.mjs);
//  2. dist/ from the sources, by TypeScript's incremental build: only what a change touches is
//     checked and written again (dist/.tsbuildinfo);
//  3. every parameter openapi.yaml declares is read by its operation's handler
//     (scripts/parameters-read.mjs): a parameter validated and then ignored stops the build.
// With nothing changed since the last build (the same bytes in every input), it stops at once.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

const projectRoot = fileURLToPath(new URL('..', import.meta.url))
const at = (path) => join(projectRoot, path)
const started = performance.now()
const quiet = process.argv.includes('--quiet')
const say = (line) => { if (!quiet) process.stdout.write(`${line}\n`) }

// What the build reads, each with the hash of its bytes.
function hashesOf (paths) {
  return Object.fromEntries(paths.filter((path) => existsSync(at(path))).map((path) => [path, createHash('sha256').update(readFileSync(at(path))).digest('hex')]))
}

function filesUnder (folder) {
  if (!existsSync(at(folder))) return []
  return readdirSync(at(folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|mts|json|sql)$/.test(file)).map((file) => join(folder, file)).sort()
}

const typesInputs = ['openapi.yaml', 'scripts/generate-types.mjs', 'scripts/webhook-names-listed.mjs', 'node_modules/openapi-typescript/package.json']
const typesStamp = 'dist/.generated-types.json'
const buildStamp = 'dist/.build-inputs.json'
const readStamp = (path) => existsSync(at(path)) ? JSON.parse(readFileSync(at(path), 'utf8')) : undefined
const writeStamp = (path, value) => {
  mkdirSync(at('dist'), { recursive: true })
  writeFileSync(at(path), JSON.stringify(value, null, 2))
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)
const buildInputs = () => hashesOf([
  ...typesInputs, 'generated/openapi.d.ts', 'package.json', 'tsconfig.json', 'tsconfig.build.json',
  'scripts/build.mjs', 'scripts/parameters-read.mjs', 'node_modules/typescript/package.json',
  ...filesUnder('src'), ...filesUnder('bench'),
])

if (same(readStamp(buildStamp), buildInputs())) {
  say(`build: nothing changed since the last build (${Math.round(performance.now() - started)} ms)`)
  process.exit(0)
}

// What follows may write dist/ and then fail: until it succeeds, no build is taken as done.
rmSync(at(buildStamp), { force: true })

// 1. The generated types, when what they are generated from changed (or they were edited); first,
// the webhooks' names are the ones an endpoint can subscribe to (scripts/webhook-names-listed.mjs).
const typesFrom = { ...hashesOf(typesInputs), generated: hashesOf(['generated/openapi.d.ts'])['generated/openapi.d.ts'] }
if (!same(readStamp(typesStamp), typesFrom)) {
  const { webhookNamesProblemsOf } = await import('./webhook-names-listed.mjs')
  const problems = webhookNamesProblemsOf(readFileSync(at('openapi.yaml'), 'utf8'))
  if (problems.length > 0) {
    for (const problem of problems) process.stderr.write(`openapi.yaml: ${problem}\n`)
    process.exit(1)
  }
  await import('./generate-types.mjs')
  writeStamp(typesStamp, { ...hashesOf(typesInputs), generated: hashesOf(['generated/openapi.d.ts'])['generated/openapi.d.ts'] })
  say('build: generated/openapi.d.ts written from openapi.yaml')
}

// 2. dist/, incrementally.
const { default: ts } = await import('typescript')
const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => { throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')) } }
const config = ts.getParsedCommandLineOfConfigFile(at('tsconfig.build.json'), { incremental: true, tsBuildInfoFile: at('dist/.tsbuildinfo') }, host)
const program = ts.createIncrementalProgram({ rootNames: config.fileNames, options: config.options, configFileParsingDiagnostics: config.errors })
const diagnostics = [
  ...program.getConfigFileParsingDiagnostics(), ...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(),
  ...program.getSyntacticDiagnostics(), ...program.getSemanticDiagnostics(),
]
const emitted = program.emit()
const errors = [...diagnostics, ...emitted.diagnostics].filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error)
if (errors.length > 0) {
  const format = process.stderr.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics
  process.stderr.write(format(errors, { getCanonicalFileName: (name) => name, getCurrentDirectory: () => projectRoot, getNewLine: () => '\n' }))
  process.stderr.write(`\nbuild: ${errors.length} error${errors.length === 1 ? '' : 's'}; dist/ holds what compiled\n`)
  process.exit(1)
}

// 3. Every declared parameter read.
const { unreadParameters } = await import('./parameters-read.mjs')
const unread = unreadParameters(ts, program.getProgram(), projectRoot)
if (unread.length > 0) {
  for (const { operationId, location, name } of unread) {
    process.stderr.write(`openapi.yaml: ${operationId} declares the ${location} parameter ${name}, which its handler never reads (src/handlers/): read it, or remove it from the spec\n`)
  }
  process.exit(1)
}

writeStamp(buildStamp, buildInputs())
say(`build: ${relative(projectRoot, at('dist'))}/ up to date (${Math.round(performance.now() - started)} ms)`)
