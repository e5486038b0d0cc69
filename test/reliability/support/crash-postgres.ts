import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'

// The data folder of the PostgreSQL server at this URL, asked while it runs: its lock file names
// the postmaster of the moment, which changes at every start.
export async function postgresDataFolder (connectionString: string): Promise<string> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    const { rows } = await client.query<{ data_directory: string }>('SHOW data_directory')
    return rows[0]!.data_directory
  } finally {
    await client.end()
  }
}

// Kills a PostgreSQL server as a power cut or the OOM killer would: every process of it at
// once, with SIGKILL, so no shutdown checkpoint is written and the lock file stays behind. The
// next start must recover from the WAL alone. (pg_ctl -m immediate is gentler: the postmaster
// tells its children to quit and removes its lock file.)
export async function killPostgresAbruptly (dataFolder: string): Promise<void> {
  const postmasterPid = Number(readFileSync(join(dataFolder, 'postmaster.pid'), 'utf8').split('\n')[0])
  // Stopped first, the postmaster forks no new backend while its children are listed.
  process.kill(postmasterPid, 'SIGSTOP')
  const processes = [postmasterPid, ...childrenOf(postmasterPid)]
  for (const pid of processes) process.kill(pid, 'SIGKILL')
  await waitUntilGone(processes)
}

function childrenOf (parentPid: number): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      // The parent's pid follows the state, after the command name in parentheses.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parentPid
    } catch {
      return false // it ended while the folder was read
    }
  })
}

// Until the processes are reaped, not only dead: the next postmaster refuses to start while the
// pid in the lock file still names a process, even a zombie.
async function waitUntilGone (pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const remaining = pids.filter((pid) => existsSync(`/proc/${pid}`))
    if (remaining.length === 0) return
    if (Date.now() > deadline) throw new Error(`PostgreSQL processes ${remaining.join(', ')} still exist 10 s after SIGKILL`)
    await sleep(20)
  }
}
