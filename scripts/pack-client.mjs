// `npm run pack:client [-- --pack-destination <folder>]`: the typed client (src/client/) as a
// package of its own, @plant-store/client, packed into dist/ (or the given folder) for
// `npm install <tarball>`. A consumer gets the client and openapi-fetch, and nothing of the
// service (Fastify, the SQLite and PostgreSQL drivers). Its version is openapi.yaml's
// info.version; its openapi-fetch range is the service's. Prints the tarball's path.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { parse as parseYaml } from 'yaml'

const root = fileURLToPath(new URL('..', import.meta.url))
const { values } = parseArgs({ options: { 'pack-destination': { type: 'string', default: join(root, 'dist') } } })
const destination = values['pack-destination']

const readJson = (file) => JSON.parse(readFileSync(join(root, file), 'utf8'))
const version = String(parseYaml(readFileSync(join(root, 'openapi.yaml'), 'utf8')).info.version)
const openapiFetch = readJson('package.json').dependencies['openapi-fetch']

const staging = mkdtempSync(join(tmpdir(), 'plant-store-client-'))
try {
  execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(root, 'client', 'tsconfig.json'), '--outDir', join(staging, 'dist')], { stdio: 'inherit' })
  // The client's declarations import the spec's types as '#openapi-types' (its package.json's
  // `imports`), which here is this copy of generated/openapi.d.ts.
  copyFileSync(join(root, 'generated', 'openapi.d.ts'), join(staging, 'openapi.d.ts'))
  copyFileSync(join(root, 'client', 'README.md'), join(staging, 'README.md'))
  copyFileSync(join(root, 'LICENSE'), join(staging, 'LICENSE'))
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify({
    ...readJson('client/package.json'), version, dependencies: { 'openapi-fetch': openapiFetch },
  }, null, 2)}\n`)
  mkdirSync(destination, { recursive: true })
  const packed = execFileSync('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', destination], { cwd: staging, encoding: 'utf8' })
  const [{ filename }] = JSON.parse(packed)
  process.stdout.write(`${join(destination, filename)}\n`)
} finally {
  rmSync(staging, { recursive: true, force: true })
}
