import { performance } from 'node:perf_hooks'
import type { RequestLoad } from '../http/connection-guard.js'

// The CPU time the process has used so far, in microseconds (Node's own figure; tests bring theirs).
export type CpuTime = () => number

// The service is saturated when it used more than this share of a core over an interval and at
// least this many requests waited for their answers, on average over the dispatcher's rounds in
// it, or more than half a core while a deep queue waited (below); it is calm when fewer
// requests waited than the calm bound, or it used less than the calm share without a deep
// queue; in between, the limit grows slowly. Either signal alone says too little: requests wait
// on a slow store while the process idles, and a service that keeps up with its load can use a
// whole core. CPU time rather than how busy the event loop was: on SQLite the loop is blocked
// while each commit waits for the disk, busy with no CPU to give, and at a steady 2,000 creates
// a second on a slow disk it looked saturated; on a machine that PostgreSQL shares, the loop of a
// saturated service idled a tenth to nearly half of the time, waiting on the store, and an interval
// now and then looked calm enough to lift the limit.
const cpuShareWhenSaturated = 0.8
const cpuShareWhenCalm = 0.6
const waitingWhenSaturated = 6
const waitingWhenCalm = 3
// A queue this deep is saturation at a lower share of a core, and is never calm: a saturated
// service on a machine whose cores PostgreSQL shares waits on the store, and its share of a core
// dips under 80% every few intervals, each dip restarting its run of saturated intervals. A
// stall of the disk at a steady rate leaves fewer waiting, and a process that waits on the disk
// alone uses less than half a core (docs/benchmark.md has the measurements).
const waitingWhenDeeplyQueued = 16
const cpuShareWhenDeeplyQueued = 0.5
// A load that lasts: a moment's stall (a collection, a burst) holds nothing back, nor do two
// saturated intervals in a row without a deep queue (below), which a steady load the service
// keeps up with can show now and then; each halving there held messages back until the next
// calm interval.
const saturatedIntervalsBeforeLimiting = 3
// A deep queue on more than half a core for two intervals in a row is no steady load the service
// keeps up with (a stall of the disk leaves fewer waiting, on less CPU): the limit drops to the
// share below at once, rather than from the third interval by halves. Under 32 connections the
// three intervals and the halvings let 5,000 to 8,000 deliveries through during a 6 s run of
// creates (mostly in its first second), each costing more than a create; with the cut after two
// deep intervals, 2,700 to 4,200 (docs/benchmark.md).
const deeplySaturatedIntervalsBeforeLimiting = 2
// The shortest interval judged: shorter ones measure the scheduler's noise more than the load.
const minimumIntervalMs = 100
// Under saturation, deliveries keep this share of the requests' pace: one attempt for every
// this many requests answered in the last interval, and at least one an interval, so that
// webhooks keep moving while the service is as busy as it can be. A delivery costs the service
// more CPU than the create it tells of (the request to the endpoint, its signature, its answer):
// at one attempt per 32 requests, creates with one endpoint ran at 79% of their rate without
// (median of 4 runs), at one per 256 at 86%. The share is a trickle by design: no share below 1
// keeps up with a saturated service, and once the load eases the backlog drains at full speed.
const requestsPerAttemptWhenSaturated = 256
// Once the limit has grown past this many attempts an interval, it is lifted.
const unlimitedAbove = 4096

// No requests: an app whose requests are injected (tests) is never saturated.
const noRequests: RequestLoad = { answered: () => 0, waiting: () => 0 }

// Deliveries give way to requests. A delivery costs the service more CPU than a create, so a
// service saturated with creates would answer less than half as many if each were delivered at once.
// While the service stays saturated, the attempts started each interval are halved (down to the
// share above), or cut to that share at once after two intervals of a deep queue on more than
// half a core; once it is calm, they double, back to no limit. At any load the service keeps up
// with, nothing is held back; under more, the messages wait in the outbox (durable, costing no
// memory) and are delivered as soon as there is room.
export class DeliveryPacer {
  private limit = Number.POSITIVE_INFINITY
  private started = 0
  private intervalStartedAt: number
  private cpuTimeAtStart: number
  private answeredAtStart: number
  private waitingSum = 0
  private waitingSamples = 0
  private saturatedIntervals = 0
  private deeplySaturatedIntervals = 0

  constructor (
    private readonly requests: RequestLoad = noRequests,
    private readonly cpuTime: CpuTime = processCpuTime,
    now = performance.now()
  ) {
    this.intervalStartedAt = now
    this.cpuTimeAtStart = cpuTime()
    this.answeredAtStart = requests.answered()
  }

  // Called on every round of the dispatcher, with a monotonic clock (performance.now(): a wall
  // clock set back would hold the interval open): counts the requests waiting, and judges the
  // interval that ended, at most every minimumIntervalMs.
  tick (now: number): void {
    this.waitingSum += this.requests.waiting()
    this.waitingSamples++
    if (now - this.intervalStartedAt < minimumIntervalMs) return
    const cpuTime = this.cpuTime()
    const answered = this.requests.answered()
    const cpuShare = (cpuTime - this.cpuTimeAtStart) / ((now - this.intervalStartedAt) * 1000)
    const waiting = this.waitingSum / this.waitingSamples
    const deeplyQueued = waiting >= waitingWhenDeeplyQueued
    const deeplySaturated = cpuShare > cpuShareWhenDeeplyQueued && deeplyQueued
    const saturated = (cpuShare > cpuShareWhenSaturated && waiting >= waitingWhenSaturated) || deeplySaturated
    const calm = waiting < waitingWhenCalm || (cpuShare < cpuShareWhenCalm && !deeplyQueued)
    // In a row: an interval not saturated breaks the run of saturated ones, and one without a
    // deep queue on over half a core the run of deeply saturated ones.
    this.saturatedIntervals = saturated ? this.saturatedIntervals + 1 : 0
    this.deeplySaturatedIntervals = deeplySaturated ? this.deeplySaturatedIntervals + 1 : 0
    const share = Math.max(1, Math.floor((answered - this.answeredAtStart) / requestsPerAttemptWhenSaturated))
    if (this.deeplySaturatedIntervals >= deeplySaturatedIntervalsBeforeLimiting) {
      this.limit = share
    } else if (saturated && this.saturatedIntervals >= saturatedIntervalsBeforeLimiting) {
      this.limit = Math.max(share, Math.floor(Math.min(this.limit, this.started) / 2))
    } else if (calm && Number.isFinite(this.limit)) {
      this.limit = this.limit * 2 > unlimitedAbove ? Number.POSITIVE_INFINITY : this.limit * 2
    } else if (!saturated && Number.isFinite(this.limit)) {
      // Between the two, the limit creeps up, so that a limit set by a burst does not outlast it.
      this.limit = Math.ceil(this.limit * 1.25)
    }
    this.started = 0
    this.waitingSum = 0
    this.waitingSamples = 0
    this.intervalStartedAt = now
    this.cpuTimeAtStart = cpuTime
    this.answeredAtStart = answered
  }

  // Whether one more attempt may start in this interval; counts it when it may.
  mayStart (): boolean {
    if (this.started >= this.limit) return false
    this.started++
    return true
  }

  // The attempts an interval may start now (Infinity: no limit).
  get attemptsPerInterval (): number {
    return this.limit
  }
}

function processCpuTime (): number {
  const { user, system } = process.cpuUsage()
  return user + system
}
