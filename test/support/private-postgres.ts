import { execFile } from 'node:child_process'
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { freePort } from './free-port.js'

// A PostgreSQL cluster of one test's own, in a temporary folder, that the test may stop and
// start at will without disturbing the shared server the other test files use in parallel.

const run = promisify(execFile)
const installRoot = '/usr/lib/postgresql'

// The newest installed version's binaries, or undefined where PostgreSQL is not installed.
const binFolder = newestBinFolder()

function newestBinFolder (): string | undefined {
  if (!existsSync(installRoot)) return undefined
  const versions = readdirSync(installRoot)
    .filter((version) => existsSync(join(installRoot, version, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : join(installRoot, versions[0], 'bin')
}

// As with the shared server, a developer without the binaries sees the test skipped with this
// reason; CI sets CI=true and never skips: there, missing binaries fail the test instead.
export const privatePostgresSkipReason: string | false = process.env.CI === 'true' || binFolder !== undefined
  ? false
  : `no PostgreSQL binaries under ${installRoot}/<version>/bin; install the postgresql package to run this test`

export interface PrivatePostgres {
  readonly port: number
  // Nothing listens here until the first start.
  readonly url: string
  // The first start creates the cluster; later ones restart it with its data.
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
}

// Reserves a free port and a folder; the cluster is created by the first start(). Teardown
// stops it, whatever state the test left it in, and removes the folder.
export async function privatePostgres (t: Test): Promise<PrivatePostgres> {
  if (binFolder === undefined) throw new Error(`no PostgreSQL binaries under ${installRoot}/<version>/bin`)
  const bin = binFolder
  // initdb refuses to run as root, so as root the cluster belongs to the postgres user.
  const owner = process.getuid?.() === 0 ? await postgresUser() : undefined
  const folder = mkdtempSync(join(tmpdir(), 'plant-store-pg-'))
  if (owner !== undefined) chownSync(folder, owner.uid, owner.gid)
  const dataFolder = join(folder, 'data')
  const logFile = join(folder, 'log')
  const port = await freePort()
  let created = false

  const pgTool = async (tool: string, args: string[]): Promise<void> => {
    const [file, fileArgs] = owner === undefined
      ? [join(bin, tool), args]
      : ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
    await run(file, fileArgs, { timeout: 20_000 })
  }

  t.teardown(async () => {
    // The server may already be down (the test stopped it); only the folder must always go.
    if (created) await pgTool('pg_ctl', ['-D', dataFolder, '-m', 'immediate', '-w', 'stop']).catch(() => undefined)
    rmSync(folder, { recursive: true, force: true })
  })

  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: async () => {
      if (!created) {
        await pgTool('initdb', ['-D', dataFolder, '-A', 'trust', '-U', 'postgres', '-N'])
        created = true
        // Settings in the file, not in pg_ctl -o, which pg_ctl hands to a shell. Later lines win.
        appendFileSync(join(dataFolder, 'postgresql.conf'), [
          `port = ${port}`,
          "listen_addresses = '127.0.0.1'",
          `unix_socket_directories = '${folder}'`,
          '',
        ].join('\n'))
      }
      await pgTool('pg_ctl', ['-D', dataFolder, '-l', logFile, '-t', '15', '-w', 'start']).catch((error: unknown) => {
        // pg_ctl says only that the server did not start; its log says why.
        const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '(no log)'
        throw new Error(`the private PostgreSQL did not start:\n${log}`, { cause: error })
      })
    },
    stop: async () => {
      await pgTool('pg_ctl', ['-D', dataFolder, '-m', 'fast', '-w', 'stop'])
    },
  }
}

async function postgresUser (): Promise<{ uid: number, gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])])
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}
