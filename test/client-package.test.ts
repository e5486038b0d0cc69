import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { createConsumerProject } from './support/consumer-project.js'
import { runCommand } from './support/run-command.js'
import { startServer } from './support/running-server.js'
import { testFolder } from './support/test-folder.js'

// `npm run pack:client` packs the typed client as a package of its own, @plant-store/client. Here
// a new project elsewhere installs the tarball, type-checks a TypeScript consumer with the
// project's tsc, and runs a JavaScript one against a live service.

const projectRoot = join(import.meta.dirname, '..')
const token = 'client-package-token'
const commandTimeout = 60_000

const typedConsumer = `
import { type ApiError, createPlantStoreClient, type Plant } from '@plant-store/client'
import type { components } from '@plant-store/client/openapi-types'

const client = createPlantStoreClient({ baseUrl: 'http://127.0.0.1:3000', token: 'a-token' })
const { data, error } = await client.POST('/plants', { body: { id: 9007199254740993n, name: 'Monstera' } })
const plant: Plant | undefined = data
const failure: ApiError | undefined = error
const newPlant: components['schemas']['NewPlant'] = { id: 1, name: 'Fern' }
// @ts-expect-error: a Plant's name is a string
await client.POST('/plants', { body: { id: 1, name: 42 } })
// @ts-expect-error: the spec declares no such path
await client.GET('/trees')
export { failure, newPlant, plant }
`

const runnableConsumer = `
import { createPlantStoreClient } from '@plant-store/client'

const client = createPlantStoreClient({ baseUrl: process.env.PLANT_STORE_URL, token: process.env.PLANT_STORE_TOKEN })
const created = await client.POST('/plants', { body: { id: 9007199254740993n, name: 'Monstera', tag: 'aroid' } })
const read = await client.GET('/plants/{id}', { params: { path: { id: 9007199254740993n } } })
console.log(JSON.stringify({ created: [created.response.status, created.data], read: [read.response.status, read.data] }))
`

t.test('the client packed on its own installs elsewhere, type-checks, and creates a plant', async (t) => {
  const folder = testFolder(t)
  const packed = await runCommand(process.execPath, [join(projectRoot, 'scripts', 'pack-client.mjs'), '--pack-destination', folder], { cwd: projectRoot, timeout: commandTimeout })
  t.equal(packed.code, 0, `npm run pack:client packs it\n${packed.stderr}`)
  const tarball = packed.stdout.trim()

  const consumer = join(folder, 'consumer')
  await createConsumerProject(consumer, tarball, commandTimeout)
  t.same(readdirSync(join(consumer, 'node_modules')).filter((name) => !name.startsWith('.')).sort(),
    ['@plant-store', 'openapi-fetch', 'openapi-typescript-helpers'], 'the client and openapi-fetch, nothing of the service')
  t.notOk(existsSync(join(consumer, 'node_modules', 'fastify')))

  writeFileSync(join(consumer, 'consumer.ts'), typedConsumer)
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: [] },
    files: ['consumer.ts'],
  }))
  const typeCheck = await runCommand(join(projectRoot, 'node_modules', '.bin', 'tsc'), ['-p', join(consumer, 'tsconfig.json')], { cwd: consumer, timeout: commandTimeout })
  t.equal(typeCheck.code, 0, `a TypeScript consumer type-checks\n${typeCheck.stdout}${typeCheck.stderr}`)

  writeFileSync(join(consumer, 'consumer.mjs'), runnableConsumer)
  const service = await startServer(t, { DATABASE_URL: `sqlite:${join(folder, 'plants.db')}`, API_TOKENS: token })
  const run = await runCommand(process.execPath, ['consumer.mjs'], {
    cwd: consumer, timeout: commandTimeout, env: { PATH: process.env.PATH ?? '', PLANT_STORE_URL: service.baseUrl, PLANT_STORE_TOKEN: token },
  })
  t.equal(run.code, 0, run.stderr)
  t.strictSame(JSON.parse(run.stdout), {
    created: [200, { name: 'Monstera', tag: 'aroid' }],
    read: [200, { name: 'Monstera', tag: 'aroid' }],
  }, 'created and read back under an id beyond 2^53')
})
