// A local PostgreSQL high-availability cluster in one command, for tests and for operators to try:
// one etcd, three PostgreSQL nodes each under Patroni (synchronous replication), and HAProxy in
// front sending clients to whichever node Patroni's REST API calls the primary. Every port is on
// 127.0.0.1. Each Patroni reaches etcd through a TCP proxy of this process's own, which `fault
// cut-etcd` blackholes to cut that node off from the DCS (no iptables needed).
//
//   node scripts/ha-cluster.mjs start [--dir <folder>] [--base-port <n>] [--patroni-defaults]
//                                     [--haproxy-check '<server check options>'] [--keep]
//   node scripts/ha-cluster.mjs status|stop [--dir <folder>]
//   node scripts/ha-cluster.mjs fault switchover|kill-postgres|kill-node|cut-etcd|heal-etcd|revive
//                                     [--node <name>] [--dir <folder>]
//
// `start` stays in the foreground, prints a line per part and DATABASE_URL once the cluster is
// ready, writes <dir>/state.json for test harnesses, and on SIGINT or SIGTERM (or `stop`) stops
// everything and removes <dir> (--keep leaves it, logs included).
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest, createServer as createHttpServer } from 'node:http'
import { connect, createServer } from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs, promisify } from 'node:util'

const host = '127.0.0.1'
const scope = 'plant-store'
const database = 'plant_store'
const nodeNames = ['node1', 'node2', 'node3']
// Pinned, so that every machine runs the Patroni these settings were measured with.
const patroniRequirements = ['patroni[etcd3]==4.1.5', 'psycopg2-binary==2.9.13']
const isRoot = process.getuid?.() === 0

// The tightest Patroni takes: it raises any ttl below 20 to 20 (a warning in its log, nothing
// else), and the leader key outlives a dead primary by ttl less the time since its last refresh
// (every loop_wait), so a dead node is replaced 18 to 20 s after it died. retry_timeout 4 demotes
// a primary cut off from etcd 4 to 6 s after the cut. Patroni's own defaults (--patroni-defaults)
// are ttl 30, loop_wait 10, retry_timeout 10.
const tightTiming = { ttl: 20, loop_wait: 2, retry_timeout: 4 }
const patroniDefaultTiming = { ttl: 30, loop_wait: 10, retry_timeout: 10 }
// /primary answers 200 only on the node holding the leader lock, so one passing check is proof
// enough (rise 1); a failing one may be a slow answer on a busy machine, so two are needed (fall
// 2), 250 ms apart once the first has failed. A node that is down is asked every 500 ms, which
// bounds how long a promoted node waits for HAProxy.
const defaultHaproxyCheck = 'inter 1s fastinter 250ms downinter 500ms fall 2 rise 1'

export function layout (basePort) {
  return {
    haproxy: basePort,
    haproxyStats: basePort + 1,
    etcdClient: basePort + 2,
    etcdPeer: basePort + 3,
    control: basePort + 4,
    nodes: Object.fromEntries(nodeNames.map((name, i) => [name, {
      postgres: basePort + 10 * (i + 1),
      rest: basePort + 10 * (i + 1) + 1,
      etcdProxy: basePort + 10 * (i + 1) + 2,
    }])),
  }
}

const usage = `usage:
  node scripts/ha-cluster.mjs start [--dir <folder>] [--base-port <n>] [--patroni-defaults] [--haproxy-check '<opts>'] [--keep]
  node scripts/ha-cluster.mjs status|stop [--dir <folder>]
  node scripts/ha-cluster.mjs fault switchover|kill-postgres|kill-node|cut-etcd|heal-etcd|revive [--node <name>] [--dir <folder>]
--dir defaults to ${join(tmpdir(), 'plant-store-ha')}, --base-port to 54300; --node to the current primary
(for heal-etcd and revive: the node last cut off or killed).
`

async function main () {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      dir: { type: 'string', default: join(tmpdir(), 'plant-store-ha') },
      'base-port': { type: 'string', default: '54300' },
      'patroni-defaults': { type: 'boolean', default: false },
      'haproxy-check': { type: 'string', default: defaultHaproxyCheck },
      keep: { type: 'boolean', default: false },
      node: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  const [command, faultKind] = positionals
  if (values.help || command === undefined) {
    process.stdout.write(usage)
    process.exit(command === undefined && !values.help ? 2 : 0)
  }
  switch (command) {
    case 'start': {
      const basePort = Number(values['base-port'])
      if (!Number.isInteger(basePort) || basePort < 1024 || basePort > 65500) fail('--base-port must be an integer from 1024 to 65500')
      await start({ dir: values.dir, basePort, patroniDefaults: values['patroni-defaults'], haproxyCheck: values['haproxy-check'], keep: values.keep })
      return
    }
    case 'stop': await stop(values.dir); return
    case 'status': status(readState(values.dir)); return
    case 'fault': {
      const result = await injectFault(readState(values.dir), faultKind, values.node)
      process.stdout.write(`${JSON.stringify(result)}\n`)
      return
    }
    default: fail(`unknown command ${JSON.stringify(command)}\n${usage}`)
  }
}

function fail (message) {
  process.stderr.write(`ha-cluster: ${message}\n`)
  process.exit(1)
}

// ---------------------------------------------------------------------------------------------
// What the cluster needs on the machine, installed where missing.

function postgresBinFolder () {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin')
}

function commandExists (file) {
  return spawnSync('sh', ['-c', `command -v ${file}`], { stdio: 'ignore' }).status === 0 ||
    ['/usr/bin', '/usr/sbin'].some((folder) => existsSync(join(folder, file)))
}

function asRoot (args) {
  const [file, rest] = isRoot ? [args[0], args.slice(1)] : ['sudo', ['-n', ...args]]
  execFileSync(file, rest, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
}

function aptInstall (packages) {
  say(`installing ${packages.join(' ')} from Debian (apt-get)`)
  // Debian starts a service's default instance on install; it would hold etcd's and HAProxy's
  // usual ports. policy-rc.d exiting 101 forbids that, for this install only.
  const policy = '/usr/sbin/policy-rc.d'
  const ownPolicy = !existsSync(policy)
  if (ownPolicy) asRoot(['sh', '-c', `printf '#!/bin/sh\\nexit 101\\n' > ${policy} && chmod 755 ${policy}`])
  try {
    asRoot(['apt-get', 'update', '-qq'])
    asRoot(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...packages])
  } finally {
    if (ownPolicy) asRoot(['rm', '-f', policy])
  }
  // Where systemd runs, keep the packages' own units from starting at the next boot.
  const systemd = spawnSync('systemctl', ['is-system-running'], { encoding: 'utf8' })
  if (systemd.status !== null && !['offline', ''].includes(systemd.stdout.trim())) {
    for (const unit of ['etcd', 'haproxy', 'postgresql']) spawnSync(isRoot ? 'systemctl' : 'sudo', [...(isRoot ? [] : ['-n', 'systemctl']), 'disable', '--now', unit], { stdio: 'ignore' })
  }
}

function ensureDebianPackages () {
  const missing = []
  if (!commandExists('etcd')) missing.push('etcd-server')
  if (!commandExists('haproxy')) missing.push('haproxy')
  if (postgresBinFolder() === undefined) missing.push('postgresql-15')
  if (spawnSync('/usr/bin/python3', ['-c', 'import ensurepip, venv'], { stdio: 'ignore' }).status !== 0) missing.push('python3-venv')
  if (missing.length > 0) aptInstall(missing)
}

// Patroni runs as the postgres user, which must be able to read its virtualenv: not under /root
// (closed to others), so not beside a checkout that may live there. Made with Debian's python3,
// not a pyenv or other interpreter that may itself live under /root.
function patroniVenv () {
  const venv = process.env.PATRONI_VENV ?? (isRoot ? '/opt/plant-store-patroni' : join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'plant-store-patroni'))
  const marker = join(venv, 'plant-store-requirements.txt')
  const wanted = `${patroniRequirements.join('\n')}\n`
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted && existsSync(join(venv, 'bin', 'patroni'))) return venv
  say(`installing Patroni in ${venv} (pip: ${patroniRequirements.join(' ')})`)
  rmSync(venv, { recursive: true, force: true })
  // Readable by the postgres user whatever this shell's umask.
  const umask = process.umask(0o022)
  execFileSync('/usr/bin/python3', ['-m', 'venv', venv], { stdio: 'inherit' })
  execFileSync(join(venv, 'bin', 'pip'), ['install', '-q', ...patroniRequirements], { stdio: 'inherit' })
  writeFileSync(marker, wanted)
  process.umask(umask)
  return venv
}

function postgresAccount () {
  if (!isRoot) return undefined
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
  return { uid, gid, env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/var/lib/postgresql', USER: 'postgres', LOGNAME: 'postgres', LANG: 'C.UTF-8' } }
}

// ---------------------------------------------------------------------------------------------
// start

async function start ({ dir, basePort, patroniDefaults, haproxyCheck, keep }) {
  const startedAt = Date.now()
  if (existsSync(join(dir, 'state.json'))) {
    const old = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'))
    if (alive(old.supervisorPid)) fail(`a cluster already runs in ${dir} (pid ${old.supervisorPid}); stop it first: node scripts/ha-cluster.mjs stop --dir ${dir}`)
  }
  ensureDebianPackages()
  const venv = patroniVenv()
  const bin = postgresBinFolder()
  const account = postgresAccount()
  const ports = layout(basePort)
  await assertPortsFree(ports)

  stopLeftovers(dir)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true, mode: 0o755 })
  if (account !== undefined && spawnSync('test', ['-x', dir], { uid: account.uid, gid: account.gid }).status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    fail(`the postgres user cannot reach ${dir} (a folder on its way is closed to others, as /root is); pick another --dir`)
  }

  const timing = patroniDefaults ? patroniDefaultTiming : tightTiming
  const password = randomBytes(12).toString('base64url')
  const replicationPassword = randomBytes(12).toString('base64url')
  const children = []
  const proxies = {}
  let stopping = false
  let ready = false
  let control

  const state = {
    dir,
    supervisorPid: process.pid,
    scope,
    timing,
    haproxyCheck,
    ports,
    databaseUrl: `postgres://postgres:${password}@${host}:${ports.haproxy}/${database}`,
    patronictl: [join(venv, 'bin', 'patronictl'), '-c', join(dir, 'patronictl.yml')],
    control: `http://${host}:${ports.control}`,
    etcd: { pid: undefined, dataDir: join(dir, 'etcd'), log: join(dir, 'etcd.log') },
    haproxy: { pid: undefined, config: join(dir, 'haproxy.cfg'), log: join(dir, 'haproxy.log'), stats: `http://${host}:${ports.haproxyStats}/` },
    nodes: Object.fromEntries(nodeNames.map((name) => [name, {
      ...ports.nodes[name],
      restUrl: `http://${host}:${ports.nodes[name].rest}`,
      patroniPid: undefined,
      dataDir: join(dir, name, 'data'),
      config: join(dir, name, 'patroni.yml'),
      log: join(dir, name, 'patroni.log'),
      etcdCut: false,
    }])),
  }
  const saveState = () => writeFileSync(join(dir, 'state.json'), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 })

  const shutdown = async (code) => {
    if (stopping) return
    stopping = true
    say('stopping')
    await stopProcesses(state, children)
    for (const proxy of Object.values(proxies)) proxy.close()
    control?.close()
    if (!keep || code === 0) rmSync(dir, { recursive: true, force: true })
    else say(`logs kept in ${dir}`)
    process.exit(code)
  }
  process.on('SIGINT', () => { void shutdown(0) })
  process.on('SIGTERM', () => { void shutdown(0) })
  try {
    await startParts()
  } catch (error) {
    process.stderr.write(`ha-cluster: ${error.message}\n`)
    await shutdown(1)
  }

  async function startParts () {
    const launch = (name, file, args, options = {}) => {
      const logFile = options.log
      const fd = openSync(logFile, 'a')
      const child = spawn(file, args, { stdio: ['ignore', fd, fd], detached: true, ...options.spawn })
      closeSync(fd)
      children.push(child)
      child.on('exit', (code, signal) => {
        if (!stopping) say(`${name} exited (${signal ?? `code ${code}`}); its log: ${logFile}`)
        if (!stopping && !ready) {
          process.stderr.write(tail(logFile))
          void shutdown(1)
        }
      })
      return child
    }

    // etcd, one member.
    const etcd = launch('etcd', 'etcd', [
      '--name', 'etcd1', '--data-dir', state.etcd.dataDir,
      '--listen-client-urls', `http://${host}:${ports.etcdClient}`, '--advertise-client-urls', `http://${host}:${ports.etcdClient}`,
      '--listen-peer-urls', `http://${host}:${ports.etcdPeer}`, '--initial-advertise-peer-urls', `http://${host}:${ports.etcdPeer}`,
      '--initial-cluster', `etcd1=http://${host}:${ports.etcdPeer}`, '--initial-cluster-state', 'new',
      '--initial-cluster-token', `plant-store-${basePort}`,
    ], { log: state.etcd.log })
    state.etcd.pid = etcd.pid
    await waitFor('etcd', 20_000, async () => (await httpGet(`http://${host}:${ports.etcdClient}/health`)).status === 200)
    say(`etcd        http://${host}:${ports.etcdClient}  pid ${etcd.pid}`)

    for (const name of nodeNames) proxies[name] = await etcdProxy(ports.nodes[name].etcdProxy, ports.etcdClient)
    control = await controlServer(ports.control, {
      cut: (name) => { proxies[name].cut(); state.nodes[name].etcdCut = true; saveState() },
      heal: (name) => { proxies[name].heal(); state.nodes[name].etcdCut = false; saveState() },
      revive: (name) => { startPatroni(name); saveState() },
    })

    // Patroni, three nodes.
    writeFileSync(join(dir, 'patronictl.yml'), patronictlConfig(ports), { mode: 0o600 })
    const startPatroni = (name) => {
      const node = state.nodes[name]
      if (alive(node.patroniPid)) throw new Error(`${name}'s Patroni still runs (pid ${node.patroniPid})`)
      const child = launch(`${name}'s Patroni`, join(venv, 'bin', 'patroni'), [node.config], {
        log: node.log,
        spawn: account === undefined ? { cwd: join(dir, name) } : { cwd: join(dir, name), uid: account.uid, gid: account.gid, env: account.env },
      })
      node.patroniPid = child.pid
      return child
    }
    for (const name of nodeNames) {
      const folder = join(dir, name)
      mkdirSync(folder, { mode: 0o700 })
      writeFileSync(state.nodes[name].config, patroniConfig({ name, folder, ports, bin, timing, password, replicationPassword }), { mode: 0o600 })
      if (account !== undefined) {
        chownSync(folder, account.uid, account.gid)
        chownSync(state.nodes[name].config, account.uid, account.gid)
      }
    }
    // The first node alone bootstraps (initdb) before the others join, so that they copy it at once
    // rather than race for the initialize key and wait out a loop.
    startPatroni('node1')
    await waitFor('a primary', 40_000, async () => (await httpGet(`${state.nodes.node1.restUrl}/primary`)).status === 200)
    startPatroni('node2')
    startPatroni('node3')
    const members = await waitFor('both standbys streaming and a synchronous standby', 60_000, async () => {
      const cluster = await clusterMembers(state)
      if (cluster === undefined) return false
      const leader = cluster.find((m) => m.role === 'leader' && m.state === 'running')
      const standbys = cluster.filter((m) => m.role !== 'leader' && m.state === 'streaming')
      return leader !== undefined && standbys.length === 2 && standbys.some((m) => m.role === 'sync_standby') && cluster
    })

    // HAProxy, to the primary.
    writeFileSync(state.haproxy.config, haproxyConfig(ports, haproxyCheck))
    const haproxy = launch('HAProxy', 'haproxy', ['-db', '-f', state.haproxy.config], { log: state.haproxy.log })
    state.haproxy.pid = haproxy.pid
    const psql = (sql, db = 'postgres') => spawnSync(join(bin, 'psql'), ['-XAtq', '-h', host, '-p', String(ports.haproxy), '-U', 'postgres', '-d', db, '-c', sql], {
      encoding: 'utf8', env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '2' },
    })
    // HAProxy takes every server for UP when it starts, until its checks say otherwise: until then
    // it also sends clients to the standbys.
    const leader = members.find((m) => m.role === 'leader').name
    await waitFor('HAProxy routing to the primary only', 20_000, async () => {
      const servers = await haproxyServers(state)
      return nodeNames.every((name) => servers[name] === (name === leader ? 'UP' : 'DOWN'))
    })
    await waitFor('a write through HAProxy', 20_000, async () => psql('select pg_is_in_recovery()').stdout.trim() === 'f')
    if (psql(`select 1 from pg_database where datname = '${database}'`).stdout.trim() !== '1') {
      const created = psql(`create database ${database}`)
      if (created.status !== 0) throw new Error(`create database ${database}: ${created.stderr}`)
    }
    // What Patroni runs, which is not always what it was given (see tightTiming).
    const effective = JSON.parse((await httpGet(`${state.nodes.node1.restUrl}/config`)).body)
    state.timing = { ttl: effective.ttl, loop_wait: effective.loop_wait, retry_timeout: effective.retry_timeout }
    saveState()
    ready = true

    for (const m of members.sort((a, b) => a.name.localeCompare(b.name))) {
      const node = state.nodes[m.name]
      say(`${m.name}       postgres ${host}:${node.postgres}  Patroni REST ${node.restUrl}  ${m.role.padEnd(12)} ${m.state.padEnd(9)} patroni pid ${node.patroniPid}`)
    }
    say(`HAProxy     ${host}:${ports.haproxy} (to the primary, by GET /primary; stats ${state.haproxy.stats})  pid ${haproxy.pid}`)
    say(`Patroni     ttl ${state.timing.ttl}, loop_wait ${state.timing.loop_wait}, retry_timeout ${state.timing.retry_timeout}, synchronous_mode on; HAProxy checks: ${haproxyCheck}`)
    say(`state       ${join(dir, 'state.json')}`)
    say(`members     ${state.patronictl.join(' ')} list`)
    say(`ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; Ctrl-C (or: node scripts/ha-cluster.mjs stop --dir ${dir}) stops it`)
    process.stdout.write(`DATABASE_URL=${state.databaseUrl}\n`)
  }
}

function patroniConfig ({ name, folder, ports, bin, timing, password, replicationPassword }) {
  const node = ports.nodes[name]
  // JSON is YAML: no YAML writer needed.
  return `${JSON.stringify({
    scope,
    namespace: '/service/',
    name,
    log: { level: 'INFO', format: '%(asctime)s %(levelname)s: %(message)s' },
    restapi: { listen: `${host}:${node.rest}`, connect_address: `${host}:${node.rest}` },
    // use_proxies: the host is this node's own proxy, not a member to discover the others from.
    etcd3: { hosts: [`${host}:${node.etcdProxy}`], protocol: 'http', use_proxies: true },
    bootstrap: {
      dcs: {
        ...timing,
        maximum_lag_on_failover: 1048576,
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: { wal_level: 'replica', hot_standby: 'on', wal_log_hints: 'on', max_wal_senders: 10, max_replication_slots: 10, wal_keep_size: '128MB', max_connections: 100 },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }, 'data-checksums'],
    },
    postgresql: {
      listen: `${host}:${node.postgres}`,
      connect_address: `${host}:${node.postgres}`,
      data_dir: join(folder, 'data'),
      bin_dir: bin,
      pgpass: join(folder, 'pgpass'),
      authentication: {
        superuser: { username: 'postgres', password },
        replication: { username: 'replicator', password: replicationPassword },
        rewind: { username: 'postgres', password },
      },
      parameters: {
        unix_socket_directories: folder,
        logging_collector: 'on',
        log_directory: join(folder, 'pglog'),
        log_filename: 'postgresql.log',
        log_min_messages: 'warning',
        shared_buffers: '32MB',
      },
      pg_hba: [
        'local all all trust',
        `host all all ${host}/32 scram-sha-256`,
        `host replication replicator ${host}/32 scram-sha-256`,
      ],
    },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
  }, null, 2)}\n`
}

function patronictlConfig (ports) {
  return `${JSON.stringify({ scope, namespace: '/service/', etcd3: { hosts: [`${host}:${ports.etcdClient}`], protocol: 'http' } }, null, 2)}\n`
}

function haproxyConfig (ports, check) {
  return [
    'global',
    '  maxconn 500',
    '',
    'defaults',
    '  mode tcp',
    '  timeout connect 1s',
    '  timeout client 30m',
    '  timeout server 30m',
    '  timeout check 1s',
    '',
    'listen stats',
    `  bind ${host}:${ports.haproxyStats}`,
    '  mode http',
    '  stats enable',
    '  stats uri /',
    '  stats refresh 1s',
    '',
    'listen primary',
    `  bind ${host}:${ports.haproxy}`,
    '  option httpchk',
    '  http-check send meth GET uri /primary',
    '  http-check expect status 200',
    `  default-server ${check} on-marked-down shutdown-sessions`,
    ...nodeNames.map((name) => `  server ${name} ${host}:${ports.nodes[name].postgres} check port ${ports.nodes[name].rest}`),
    '',
  ].join('\n')
}

// A TCP proxy between one node's Patroni and etcd. cut() blackholes it as a network partition
// would: open connections go silent (nothing forwarded either way, nothing closed), and new ones
// are accepted and then ignored. heal() drops those silent connections, so that Patroni
// reconnects, and forwards again.
function etcdProxy (port, targetPort) {
  let isCut = false
  const pairs = new Set()
  const silent = new Set()
  const hold = (socket) => {
    silent.add(socket)
    socket.on('data', () => {})
    socket.on('close', () => silent.delete(socket))
  }
  const server = createServer((client) => {
    client.on('error', () => {})
    if (isCut) { hold(client); return }
    const upstream = connect(targetPort, host)
    upstream.on('error', () => client.destroy())
    const pair = { client, upstream }
    pairs.add(pair)
    client.pipe(upstream)
    upstream.pipe(client)
    const drop = () => { pairs.delete(pair); client.destroy(); upstream.destroy() }
    client.on('close', () => { if (pairs.has(pair)) drop() })
    upstream.on('close', () => { if (pairs.has(pair)) drop() })
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve({
      cut () {
        isCut = true
        for (const pair of pairs) {
          pairs.delete(pair)
          pair.client.unpipe(pair.upstream)
          pair.upstream.unpipe(pair.client)
          pair.upstream.destroy()
          hold(pair.client)
        }
      },
      heal () {
        isCut = false
        for (const socket of silent) socket.destroy()
      },
      close () {
        for (const socket of silent) socket.destroy()
        for (const pair of pairs) { pair.client.destroy(); pair.upstream.destroy() }
        server.close()
      },
    }))
  })
}

// POST /nodes/<name>/cut-etcd | heal-etcd | revive: what `fault` asks of the running `start`.
function controlServer (port, actions) {
  const server = createHttpServer((req, res) => {
    const match = /^\/nodes\/(node[123])\/(cut-etcd|heal-etcd|revive)$/.exec(req.url ?? '')
    if (req.method !== 'POST' || match === null) { res.writeHead(404).end(); return }
    try {
      ({ 'cut-etcd': actions.cut, 'heal-etcd': actions.heal, revive: actions.revive })[match[2]](match[1])
      res.writeHead(204).end()
    } catch (error) {
      res.writeHead(409, { 'content-type': 'text/plain' }).end(String(error.message))
    }
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve(server))
  })
}

// ---------------------------------------------------------------------------------------------
// stop, status

async function stopProcesses (state, children = []) {
  const signalAll = (pids, signal) => { for (const pid of pids) { try { process.kill(pid, signal) } catch {} } }
  const waitGone = async (pids, ms) => {
    const until = Date.now() + ms
    while (pids.some(alive) && Date.now() < until) await sleep(100)
  }
  // HAProxy first (clients see the cluster go), then Patroni, which stops its PostgreSQL.
  const haproxy = [state.haproxy?.pid].filter(alive)
  signalAll(haproxy, 'SIGTERM')
  const patroni = Object.values(state.nodes).map((n) => n.patroniPid).filter(alive)
  signalAll(patroni, 'SIGTERM')
  await waitGone([...haproxy, ...patroni], 15_000)
  signalAll([...haproxy, ...patroni].filter(alive), 'SIGKILL')
  // A PostgreSQL whose Patroni was killed lives on in a session of its own: immediate shutdown.
  const postmasters = Object.values(state.nodes).map((n) => postmasterPid(n.dataDir)).filter(alive)
  signalAll(postmasters, 'SIGQUIT')
  await waitGone(postmasters, 10_000)
  signalAll(postmasters.filter(alive), 'SIGKILL')
  const etcd = [state.etcd?.pid].filter(alive)
  signalAll(etcd, 'SIGTERM')
  await waitGone(etcd, 10_000)
  signalAll(etcd.filter(alive), 'SIGKILL')
  signalAll(children.map((c) => c.pid).filter(alive), 'SIGKILL')
}

// Processes a `start` that was itself killed left behind in the folder.
function stopLeftovers (dir) {
  const file = join(dir, 'state.json')
  if (!existsSync(file)) return
  const state = JSON.parse(readFileSync(file, 'utf8'))
  for (const pid of [state.haproxy?.pid, state.etcd?.pid, ...Object.values(state.nodes).flatMap((n) => [n.patroniPid, postmasterPid(n.dataDir)])]) {
    if (alive(pid)) { try { process.kill(pid, 'SIGKILL') } catch {} }
  }
}

async function stop (dir) {
  if (!existsSync(join(dir, 'state.json'))) {
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true })
    say(`no cluster in ${dir}`)
    return
  }
  const state = readState(dir)
  if (alive(state.supervisorPid)) {
    process.kill(state.supervisorPid, 'SIGTERM')
    const until = Date.now() + 40_000
    while (alive(state.supervisorPid) && Date.now() < until) await sleep(100)
  }
  await stopProcesses(state)
  rmSync(dir, { recursive: true, force: true })
  say(`stopped; removed ${dir}`)
}

function status (state) {
  const [file, ...args] = state.patronictl
  const result = spawnSync(file, [...args, 'list'], { stdio: 'inherit' })
  process.exitCode = result.status ?? 1
}

function readState (dir) {
  const file = join(dir, 'state.json')
  if (!existsSync(file)) fail(`no cluster in ${dir} (no state.json); start one with: node scripts/ha-cluster.mjs start --dir ${dir}`)
  return JSON.parse(readFileSync(file, 'utf8'))
}

// ---------------------------------------------------------------------------------------------
// Faults, for test harnesses (import { injectFault } from this file) and for `fault`.

export async function clusterMembers (state) {
  for (const node of Object.values(state.nodes)) {
    const answer = await httpGet(`${node.restUrl}/cluster`).catch(() => undefined)
    if (answer?.status === 200) return JSON.parse(answer.body).members
  }
  return undefined
}

export async function currentPrimary (state) {
  for (const [name, node] of Object.entries(state.nodes)) {
    if ((await httpGet(`${node.restUrl}/primary`).catch(() => undefined))?.status === 200) return name
  }
  return undefined
}

// Each server's status in HAProxy's stats: UP, DOWN, or on the way (UP 1/2, DOWN 1/2...).
export async function haproxyServers (state) {
  try {
    const csv = (await httpGet(`${state.haproxy.stats};csv`)).body
    const [header, ...rows] = csv.split('\n')
    const status = header.replace(/^# /, '').split(',').indexOf('status')
    return Object.fromEntries(rows.map((row) => row.split(','))
      .filter((cells) => cells[0] === 'primary' && state.nodes[cells[1]] !== undefined)
      .map((cells) => [cells[1], cells[status]]))
  } catch {
    return {}
  }
}

export function postmasterPid (dataDir) {
  try {
    return Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  } catch {
    return undefined
  }
}

// Returns { fault, node, at } where at is Date.now() just before the fault took effect.
export async function injectFault (state, kind, nodeName) {
  const kinds = ['switchover', 'kill-postgres', 'kill-node', 'cut-etcd', 'heal-etcd', 'revive']
  if (!kinds.includes(kind)) throw new Error(`fault must be one of ${kinds.join(', ')}`)
  const name = nodeName ?? (kind === 'heal-etcd'
    ? Object.keys(state.nodes).find((n) => state.nodes[n].etcdCut)
    : kind === 'revive' ? Object.keys(state.nodes).find((n) => !alive(state.nodes[n].patroniPid)) : await currentPrimary(state))
  if (name === undefined || state.nodes[name] === undefined) throw new Error(`no node to ${kind}${nodeName === undefined ? ' (none is the primary, cut off or stopped)' : `: ${nodeName}`}`)
  const node = state.nodes[name]
  const at = Date.now()
  switch (kind) {
    case 'switchover': {
      const [file, ...args] = state.patronictl
      // Not execFileSync: a caller measuring the switchover keeps its event loop.
      await promisify(execFile)(file, [...args, 'switchover', '--leader', name, '--force'])
      break
    }
    case 'kill-postgres':
      process.kill(postmasterPid(node.dataDir), 'SIGKILL')
      break
    case 'kill-node': {
      // The node dies whole: Patroni, the postmaster and every process of PostgreSQL's at once.
      // Not by process group: Patroni starts the postmaster in a session of its own, and each
      // backend calls setsid() too. Listed before the first kill, while they are its children, and
      // with Patroni and the postmaster stopped first, so that neither starts a process meanwhile.
      // A backend may end by itself between the listing and its kill: that one is gone already.
      const postmaster = postmasterPid(node.dataDir)
      const parents = [node.patroniPid, postmaster].filter(alive)
      for (const pid of parents) signalIfAlive(pid, 'SIGSTOP')
      for (const pid of [...parents, ...childrenOf(postmaster)]) signalIfAlive(pid, 'SIGKILL')
      break
    }
    case 'cut-etcd':
    case 'heal-etcd':
    case 'revive': {
      const answer = await httpPost(`${state.control}/nodes/${name}/${kind}`)
      if (answer.status !== 204) throw new Error(`${kind} ${name}: ${answer.status} ${answer.body}`)
      break
    }
  }
  return { fault: kind, node: name, at }
}

function signalIfAlive (pid, signal) {
  try {
    process.kill(pid, signal)
  } catch (error) {
    if (error.code !== 'ESRCH') throw error
  }
}

function childrenOf (parent) {
  if (parent === undefined) return []
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).flatMap((entry) => {
    try {
      // The fourth field of /proc/<pid>/stat, after the parenthesised command name, is the parent.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent ? [Number(entry)] : []
    } catch {
      return []
    }
  })
}

// ---------------------------------------------------------------------------------------------

function say (line) {
  process.stdout.write(`${line}\n`)
}

function alive (pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  // A zombie (exited, not yet reaped by its parent) counts as gone.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return true
  }
}

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

async function waitFor (what, ms, check) {
  const until = Date.now() + ms
  for (;;) {
    const result = await check().catch(() => false)
    if (result) return result
    if (Date.now() > until) throw new Error(`no ${what} within ${ms / 1000} s`)
    await sleep(200)
  }
}

function httpGet (url) { return httpCall('GET', url) }
function httpPost (url) { return httpCall('POST', url) }

function httpCall (method, url) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, timeout: 2000 }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode, body }))
    })
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer in 2 s`)))
    req.on('error', reject)
    req.end()
  })
}

function tail (file, lines = 30) {
  try {
    return `--- last lines of ${file}\n${readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n')}\n`
  } catch {
    return ''
  }
}

async function assertPortsFree (ports) {
  const all = [ports.haproxy, ports.haproxyStats, ports.etcdClient, ports.etcdPeer, ports.control,
    ...Object.values(ports.nodes).flatMap((n) => [n.postgres, n.rest, n.etcdProxy])]
  for (const port of all) {
    await new Promise((resolve) => {
      const server = createServer()
      server.once('error', () => fail(`port ${host}:${port} is taken; pick another --base-port (the cluster uses ${ports.haproxy} to ${ports.haproxy + 42})`))
      server.listen(port, host, () => server.close(resolve))
    })
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    process.stderr.write(`ha-cluster: ${error.stack ?? error}\n`)
    process.exit(1)
  })
}
