// Measures one failover of the cluster `node scripts/ha-cluster.mjs start` runs: a client writes a
// row through HAProxy every 50 ms (1 s to connect, 1 s per statement, a new connection after any
// error), the fault is injected after a few seconds of steady writes, and the probe reports when
// each step of the recovery was first seen, in ms after the fault:
//   primaryUp   a node other than the old primary answers Patroni's GET /primary with 200: the
//               election and promotion are done (a primary restarted in place answers 200 all along)
//   haproxyUp   HAProxy's stats show that node UP: the health checks have seen it
//   write       the first write that succeeded after the outage (or on the new primary)
// and the outage as the client saw it (the last write that succeeded before it to the first after).
// Then it puts the cluster back (heal-etcd, revive) and waits for it to be whole again.
//
//   node scripts/ha-failover-probe.mjs switchover|kill-postgres|kill-node|cut-etcd [--dir <folder>]
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { clusterMembers, currentPrimary, haproxyServers, injectFault } from './ha-cluster.mjs'

const { Client } = createRequire(import.meta.url)('pg')

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { dir: { type: 'string', default: join(tmpdir(), 'plant-store-ha') }, settle: { type: 'string', default: '3000' } },
})
const kind = positionals[0]
if (!['switchover', 'kill-postgres', 'kill-node', 'cut-etcd'].includes(kind)) {
  process.stderr.write('usage: node scripts/ha-failover-probe.mjs switchover|kill-postgres|kill-node|cut-etcd [--dir <folder>]\n')
  process.exit(2)
}
const state = JSON.parse(readFileSync(join(values.dir, 'state.json'), 'utf8'))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const writes = [] // { at, ok, port?, error? }
let client
const writing = { on: true }
const writer = (async () => {
  await withClient(async (c) => c.query('create table if not exists ha_probe (id bigserial primary key, at timestamptz not null default now(), port int not null)'))
  while (writing.on) {
    const at = Date.now()
    try {
      const result = await withClient(async (c) => c.query('insert into ha_probe (port) values (inet_server_port()) returning port'))
      writes.push({ at, ok: true, port: result.rows[0].port })
    } catch (error) {
      writes.push({ at, ok: false, error: error.code ?? error.message })
    }
    await sleep(50)
  }
})()

async function withClient (use) {
  if (client === undefined) {
    const fresh = new Client({ connectionString: state.databaseUrl, connectionTimeoutMillis: 1000, query_timeout: 1000 })
    fresh.on('error', () => {})
    try {
      await fresh.connect()
    } catch (error) {
      fresh.end().catch(() => {})
      throw error
    }
    client = fresh
  }
  try {
    return await use(client)
  } catch (error) {
    const broken = client
    client = undefined
    broken.end().catch(() => {})
    throw error
  }
}

const primaryPort = (name) => state.nodes[name].postgres
const oldPrimary = await currentPrimary(state)
if (oldPrimary === undefined) throw new Error('no primary to start from')
await sleep(Number(values.settle))
const fault = await injectFault(state, kind, oldPrimary)
const seen = {}
const mark = (what) => { if (seen[what] === undefined) seen[what] = Date.now() - fault.at }

// Watch Patroni and HAProxy every 100 ms until the first write after the outage.
let newPrimary
const notPrimary = new Set()
for (;;) {
  const since = Date.now() - fault.at
  if (since > 90_000) break
  if (newPrimary === undefined || seen.haproxyUp === undefined) {
    // The old primary may answer 200 a moment after its PostgreSQL died: it counts again only
    // once it has answered otherwise.
    const answers = await Promise.all(Object.entries(state.nodes).map(async ([name, node]) => {
      const response = await fetch(`${node.restUrl}/primary`, { signal: AbortSignal.timeout(500) }).catch(() => undefined)
      return [name, response?.status ?? 0]
    }))
    for (const [name, status] of answers) {
      if (status !== 200) notPrimary.add(name)
      else if (newPrimary === undefined && (name !== oldPrimary || notPrimary.has(name))) {
        newPrimary = name
        mark('primaryUp')
      }
    }
    const servers = await haproxyServers(state)
    if (servers[oldPrimary]?.startsWith('DOWN') || servers[oldPrimary]?.startsWith('MAINT')) mark('haproxyOldDown')
    if (newPrimary !== undefined && servers[newPrimary] === 'UP') mark('haproxyUp')
  }
  const after = writes.filter((w) => w.at >= fault.at)
  const failed = after.some((w) => !w.ok)
  const recovered = after.find((w, i) => w.ok && (after.slice(0, i).some((e) => !e.ok) || w.port !== primaryPort(oldPrimary)))
  // Patroni's /primary answers 200 on a primary whose PostgreSQL is down and being restarted in
  // place (it goes by the role it holds), so such a return is seen only as the first write.
  if (recovered !== undefined && (seen.haproxyUp !== undefined || recovered.port === primaryPort(oldPrimary))) {
    seen.write = recovered.at - fault.at
    if (failed) seen.firstFailure = after.find((w) => !w.ok).at - fault.at
    const lastBefore = writes.filter((w) => w.ok && w.at < recovered.at && w.port === primaryPort(oldPrimary)).at(-1)
    seen.lastOldWrite = lastBefore === undefined ? undefined : lastBefore.at - fault.at
    seen.outage = recovered.at - (lastBefore?.at ?? fault.at)
    seen.errors = [...new Set(after.filter((w) => !w.ok && w.at < recovered.at).map((w) => w.error))].slice(0, 5)
    break
  }
  await sleep(100)
}
writing.on = false
await writer
await client?.end().catch(() => {})

const oldPort = primaryPort(oldPrimary)
const newPort = writes.filter((w) => w.ok).at(-1)?.port
const report = { fault: kind, timing: state.timing, haproxyCheck: state.haproxyCheck, oldPrimary, newPrimary: Object.keys(state.nodes).find((n) => primaryPort(n) === newPort), oldPort, ...seen }
process.stdout.write(`${JSON.stringify(report)}\n`)

// Put the cluster back together for the next run.
if (kind === 'cut-etcd') await injectFault(state, 'heal-etcd', oldPrimary)
if (kind === 'kill-node') await injectFault(JSON.parse(readFileSync(join(values.dir, 'state.json'), 'utf8')), 'revive', oldPrimary)
const until = Date.now() + 60_000
for (;;) {
  const members = await clusterMembers(state).catch(() => undefined)
  if (members?.length === 3 && members.filter((m) => m.state === 'streaming').length === 2 && members.some((m) => m.role === 'sync_standby')) break
  if (Date.now() > until) {
    process.stderr.write(`the cluster is not whole again after 60 s: ${JSON.stringify(members)}\n`)
    process.exit(1)
  }
  await sleep(500)
}
