import { spawn } from 'node:child_process'
import { chmodSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { awaitOutput } from '../../support/await-output.js'
import { runCommand } from '../../support/run-command.js'
import { testFolder } from '../../support/test-folder.js'

// The HA cluster of scripts/ha-cluster.mjs (etcd, three PostgreSQL nodes under Patroni in
// synchronous mode, HAProxy to the primary), started for one test and stopped when it ends, and
// its faults, asked of the script as an operator would.

const script = join(import.meta.dirname, '..', '..', '..', 'scripts', 'ha-cluster.mjs')

// Outside CI, a machine without the cluster's parts skips the test with this reason (the script
// installs them, as root, at its first start); CI never skips it.
export const haClusterSkipReason: string | false = process.env.CI === 'true' || ['/usr/bin/etcd', '/usr/sbin/haproxy'].every(existsSync)
  ? false
  : 'etcd and HAProxy are not installed: node scripts/ha-cluster.mjs start installs them (apt-get, as root) and Patroni'

export type FaultKind = 'switchover' | 'kill-postgres' | 'kill-node' | 'cut-etcd' | 'heal-etcd' | 'revive'

export interface InjectedFault {
  readonly fault: FaultKind
  readonly node: string
  // Date.now() just before the fault took effect.
  readonly at: number
}

export interface ClusterMember {
  readonly name: string
  readonly role: string
  readonly state: string
}

interface ClusterState {
  readonly databaseUrl: string
  readonly timing: { ttl: number, loop_wait: number, retry_timeout: number }
  readonly haproxy: { stats: string }
  readonly nodes: Record<string, { restUrl: string }>
}

export interface HaCluster {
  // Through HAProxy, to whichever node is the primary.
  readonly databaseUrl: string
  // What Patroni runs (it raises a ttl below 20 to 20).
  readonly timing: ClusterState['timing']
  readonly inject: (fault: FaultKind) => Promise<InjectedFault>
  // Until a leader runs, both standbys stream (one of them synchronous) and HAProxy sends
  // clients to the leader alone.
  readonly waitUntilHealthy: (timeoutMs: number) => Promise<ClusterMember[]>
  // Until a node other than this one leads and runs; resolves with that moment.
  readonly waitForLeaderOtherThan: (node: string, timeoutMs: number) => Promise<number>
  readonly output: () => string
}

export async function startHaCluster (t: Test): Promise<HaCluster> {
  const folder = join(testFolder(t), 'cluster')
  // The postgres user runs the nodes: it must reach the folder, which mkdtemp made private.
  chmodSync(join(folder, '..'), 0o755)
  for (let attempt = 1; ; attempt++) {
    // A block of 43 ports below Linux's ephemeral range (32768 and up), where a connection's own
    // port could take one while a node restarts; the script refuses a block in use, and another
    // is tried.
    const basePort = 20_000 + 100 * Math.floor(Math.random() * 120)
    const started = await startOnPorts(t, folder, basePort)
    if (started !== undefined) return started
    if (attempt === 3) throw new Error('the HA cluster did not start on three blocks of ports')
  }
}

async function startOnPorts (t: Test, folder: string, basePort: number): Promise<HaCluster | undefined> {
  const child = spawn(process.execPath, [script, 'start', '--dir', folder, '--base-port', String(basePort)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  // The script stops every part and removes its folder on SIGTERM.
  t.teardown(async () => {
    child.kill('SIGTERM')
    await Promise.race([exited, sleep(60_000)])
    if (!t.passing()) t.comment(`output of the HA cluster:\n${output}`)
  })
  try {
    // A fresh machine installs etcd, HAProxy and Patroni first.
    await awaitOutput(child, () => output, /DATABASE_URL=/, 'the HA cluster to start', 300_000)
  } catch (error) {
    if (/is taken; pick another --base-port/.test(output)) return undefined
    throw error
  }
  const state = JSON.parse(readFileSync(join(folder, 'state.json'), 'utf8')) as ClusterState
  return {
    databaseUrl: state.databaseUrl,
    timing: state.timing,
    output: () => output,
    inject: async (fault) => {
      const result = await runCommand(process.execPath, [script, 'fault', fault, '--dir', folder], { timeout: 60_000 })
      if (result.code !== 0) throw new Error(`fault ${fault}: ${result.stderr}`)
      return JSON.parse(result.stdout) as InjectedFault
    },
    waitUntilHealthy: async (timeoutMs) => waitUntilHealthy(state, timeoutMs),
    waitForLeaderOtherThan: async (node, timeoutMs) => {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        const members = await clusterMembers(state)
        if (members?.some(({ name, role, state }) => name !== node && role === 'leader' && state === 'running') === true) return Date.now()
        await sleep(100)
      }
      throw new Error(`no node but ${node} led within ${timeoutMs} ms`)
    },
  }
}

async function waitUntilHealthy (state: ClusterState, timeoutMs: number): Promise<ClusterMember[]> {
  const deadline = Date.now() + timeoutMs
  let last = 'no answer yet'
  while (Date.now() < deadline) {
    const members = await clusterMembers(state)
    const leader = members?.find(({ role, state }) => role === 'leader' && state === 'running')
    const standbys = members?.filter(({ role, state }) => role !== 'leader' && state === 'streaming') ?? []
    if (leader !== undefined && standbys.length === 2 && standbys.some(({ role }) => role === 'sync_standby')) {
      const servers = await haproxyServers(state)
      if (Object.entries(state.nodes).every(([name]) => servers[name] === (name === leader.name ? 'UP' : 'DOWN'))) return members!
      last = `HAProxy: ${JSON.stringify(servers)}`
    } else {
      last = `members: ${JSON.stringify(members)}`
    }
    await sleep(250)
  }
  throw new Error(`the HA cluster was not healthy within ${timeoutMs} ms (${last})`)
}

async function clusterMembers (state: ClusterState): Promise<ClusterMember[] | undefined> {
  for (const { restUrl } of Object.values(state.nodes)) {
    try {
      const answer = await fetch(`${restUrl}/cluster`, { signal: AbortSignal.timeout(2000) })
      if (answer.ok) return ((await answer.json()) as { members: ClusterMember[] }).members
    } catch {
      // That node is down; ask the next.
    }
  }
  return undefined
}

// Each node's status in HAProxy's statistics: UP, DOWN, or on its way (UP 1/2, ...).
async function haproxyServers (state: ClusterState): Promise<Record<string, string>> {
  try {
    const csv = await (await fetch(`${state.haproxy.stats};csv`, { signal: AbortSignal.timeout(2000) })).text()
    const [header = '', ...rows] = csv.split('\n')
    const status = header.replace(/^# /, '').split(',').indexOf('status')
    return Object.fromEntries(rows.map((row) => row.split(',')).filter((cells) => cells[0] === 'primary').map((cells) => [cells[1], cells[status]]))
  } catch {
    return {}
  }
}
