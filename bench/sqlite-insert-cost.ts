import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { positiveOption } from './command-line.js'
import { type LargeStoreShape, plantDocument, randomPlantId, storeTenMillionPlants } from './ten-million-plants.js'

// `npm run bench:sqlite-inserts`: what SQLite and its driver spend on a create with a random id on a
// large store of each shape (bench/ten-million-plants.ts), without HTTP or the service: batches
// of inserts in one transaction each, as the service's group commit writes them, on a fresh copy
// of the store for every run, the shapes alternating. synchronous = OFF and a passive checkpoint
// every 50 batches on the same connection, so that the CPU time (this process's, from
// process.cpuUsage) is SQLite's work and the kernel's copying, not waits for the disk.
const { values: options } = parseArgs({
  options: {
    stored: { type: 'string', default: '10000000' },
    inserts: { type: 'string', default: '90000' },
    batch: { type: 'string', default: '30' },
    runs: { type: 'string', default: '2' },
  },
})
const stored = positiveOption(options, 'stored', true)
const batchSize = positiveOption(options, 'batch', true)
const batches = Math.ceil(positiveOption(options, 'inserts', true) / batchSize)
const runs = positiveOption(options, 'runs', true)
const checkpointEveryBatches = 50

function microsecondsPerInsert (filename: string): number {
  const database = new Database(filename)
  try {
    database.pragma('journal_mode = WAL')
    database.pragma('synchronous = OFF')
    database.pragma('wal_autocheckpoint = 0')
    const insert = database.prepare('INSERT INTO plants (id, document) VALUES (?, ?) ON CONFLICT (id) DO NOTHING')
    const insertBatch = database.transaction((ids: readonly bigint[]) => {
      for (const id of ids) insert.run(id, plantDocument)
    })
    const randomIds = (): bigint[] => Array.from({ length: batchSize }, randomPlantId)
    const before = process.cpuUsage()
    for (let batch = 1; batch <= batches; batch++) {
      insertBatch(randomIds())
      if (batch % checkpointEveryBatches === 0) database.pragma('wal_checkpoint(PASSIVE)')
    }
    const { user, system } = process.cpuUsage(before)
    return (user + system) / (batches * batchSize)
  } finally {
    database.close()
  }
}

const folder = mkdtempSync(join(tmpdir(), 'plant-store-sqlite-inserts-'))
try {
  const shapes: LargeStoreShape[] = ['grown', 'packed']
  for (const shape of shapes) {
    process.stdout.write(`storing ${stored.toLocaleString('en-US')} plants, ${shape}… `)
    process.stdout.write(`done in ${(await storeTenMillionPlants(join(folder, `${shape}.db`), stored, shape)).toFixed(1)} s\n`)
  }
  const results = new Map<LargeStoreShape, number[]>(shapes.map((shape) => [shape, []]))
  for (let run = 1; run <= runs; run++) {
    for (const shape of shapes) {
      const copy = join(folder, 'copy.db')
      copyFileSync(join(folder, `${shape}.db`), copy)
      const cost = microsecondsPerInsert(copy)
      rmSync(copy, { force: true })
      rmSync(`${copy}-wal`, { force: true })
      rmSync(`${copy}-shm`, { force: true })
      results.get(shape)!.push(cost)
      process.stdout.write(`run ${run}, ${shape}: ${cost.toFixed(1)} µs of CPU per insert\n`)
    }
  }
  for (const [shape, costs] of results) {
    process.stdout.write(`${shape}: ${costs.map((cost) => cost.toFixed(1)).join(', ')} µs per insert (${(batches * batchSize).toLocaleString('en-US')} inserts with random ids in batches of ${batchSize}, each run)\n`)
  }
} finally {
  rmSync(folder, { recursive: true, force: true })
}
