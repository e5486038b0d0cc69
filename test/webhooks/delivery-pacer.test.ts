import { test } from 'tap'
import { DeliveryPacer } from '../../src/webhooks/delivery-pacer.js'

// A service whose load the test sets interval by interval: the share of a core it used, how many
// requests it answered, and how many wait for their answers.
class FakeLoad {
  private cpuMicroseconds = 0
  private answeredSoFar = 0
  waitingNow = 0
  now = 1_000_000

  readonly requests = { answered: () => this.answeredSoFar, waiting: () => this.waitingNow }
  readonly cpuTime = (): number => this.cpuMicroseconds

  // The next 100 ms: `cpu` of a core used, `answered` requests answered, `waiting` waiting.
  interval (pacer: DeliveryPacer, { cpu, answered, waiting }: { cpu: number, answered: number, waiting: number }): void {
    this.cpuMicroseconds += 100_000 * cpu
    this.answeredSoFar += answered
    this.waitingNow = waiting
    this.now += 100
    pacer.tick(this.now)
  }
}

// Saturated: a whole core used with 8 requests waiting. Deeply queued: 32 waiting.
const saturated = { cpu: 1, answered: 12800, waiting: 8 }
const deeplyQueued = { cpu: 1, answered: 12800, waiting: 32 }

function startsAllowed (pacer: DeliveryPacer, tries = 100_000): number {
  let started = 0
  while (started < tries && pacer.mayStart()) started++
  return started
}

// `intervals` saturated intervals, each starting every attempt the pacer allows.
function saturateFor (load: FakeLoad, pacer: DeliveryPacer, intervals: number): void {
  for (let i = 0; i < intervals; i++) {
    startsAllowed(pacer)
    load.interval(pacer, saturated)
  }
}

function pacerOn (load: FakeLoad): DeliveryPacer {
  return new DeliveryPacer(load.requests, load.cpuTime, load.now)
}

test('with no requests (an app driven by inject), deliveries are never held back', async (t) => {
  const pacer = new DeliveryPacer(undefined, undefined, 0)
  for (let now = 100; now <= 1000; now += 100) {
    t.equal(startsAllowed(pacer, 5000), 5000)
    pacer.tick(now)
  }
  t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY)
})

test('a service saturated without a deep queue for three intervals and more halves the attempts of each, down to one for every 256 requests it answered', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  t.equal(startsAllowed(pacer, 2000), 2000, 'no limit before the first interval is judged')
  load.interval(pacer, saturated)
  t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY, 'one saturated interval holds nothing back')
  t.equal(startsAllowed(pacer, 2000), 2000)
  load.interval(pacer, saturated)
  t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY, 'nor do two')
  t.equal(startsAllowed(pacer, 2000), 2000)
  load.interval(pacer, saturated)
  t.equal(pacer.attemptsPerInterval, 1000, 'half of the 2000 started in the third saturated interval')
  t.equal(startsAllowed(pacer), 1000)
  load.interval(pacer, saturated)
  t.equal(pacer.attemptsPerInterval, 500)
  for (let i = 0; i < 10; i++) {
    startsAllowed(pacer)
    load.interval(pacer, saturated)
  }
  t.equal(pacer.attemptsPerInterval, 12800 / 256, 'no lower than the share of the requests answered')
  t.equal(startsAllowed(pacer), 50)
})

test('a deep queue on more than half a core for two intervals in a row cuts the attempts to one for every 256 requests answered at once', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  t.equal(startsAllowed(pacer, 2000), 2000)
  load.interval(pacer, deeplyQueued)
  t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY, 'one such interval holds nothing back')
  t.equal(startsAllowed(pacer, 2000), 2000)
  load.interval(pacer, deeplyQueued)
  t.equal(pacer.attemptsPerInterval, 12800 / 256, 'the second: the share, not half of what started')
  t.equal(startsAllowed(pacer), 50)
  load.interval(pacer, { ...deeplyQueued, answered: 25600 })
  t.equal(pacer.attemptsPerInterval, 100, 'the share of each interval while the queue stays deep')
  t.equal(startsAllowed(pacer), 100)
  load.interval(pacer, { ...saturated, answered: 2560 })
  t.equal(pacer.attemptsPerInterval, 50, 'saturated without a deep queue: half of the 100 started, above the share of 10')
})

test('a saturated interval without a deep queue breaks a run of deep ones: the third deep interval after it is needed again', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  startsAllowed(pacer, 2000)
  load.interval(pacer, deeplyQueued)
  startsAllowed(pacer, 2000)
  load.interval(pacer, saturated)
  t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY, 'one deep and one saturated interval hold nothing back')
  startsAllowed(pacer, 2000)
  load.interval(pacer, deeplyQueued)
  t.equal(pacer.attemptsPerInterval, 1000, 'the third saturated in a row halves the 2000 started, not the share of 50')
})

test('under saturation with few requests answered, one attempt an interval still starts, with a deep queue or without', async (t) => {
  for (const waiting of [32, 8]) {
    const load = new FakeLoad()
    const pacer = pacerOn(load)
    for (let i = 0; i < 20; i++) {
      startsAllowed(pacer)
      load.interval(pacer, { cpu: 1, answered: 3, waiting })
    }
    t.equal(pacer.attemptsPerInterval, 1, `${waiting} waiting`)
    t.equal(startsAllowed(pacer), 1)
  }
})

test('once the service is no longer saturated, the limit doubles each interval and is then lifted', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  saturateFor(load, pacer, 20)
  t.equal(pacer.attemptsPerInterval, 50)
  const limits: number[] = []
  for (let i = 0; i < 8; i++) {
    load.interval(pacer, { cpu: 0.3, answered: 200, waiting: 1 })
    limits.push(pacer.attemptsPerInterval)
  }
  t.same(limits, [100, 200, 400, 800, 1600, 3200, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY])
})

test('a service using a whole core with few requests waiting is not saturated', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  for (let i = 0; i < 10; i++) {
    startsAllowed(pacer, 500)
    load.interval(pacer, { cpu: 1, answered: 200, waiting: 2 })
  }
  t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY)
})

test('many requests waiting on a process that uses little CPU are not held up by deliveries (a slow store; SQLite\'s loop blocked on the disk)', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  for (let i = 0; i < 10; i++) {
    startsAllowed(pacer, 500)
    load.interval(pacer, { cpu: 0.4, answered: 200, waiting: 32 })
  }
  t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY)
})

test('between saturated and calm (a whole core used with a few requests waiting, or some waiting with 60 to 80% of a core, or a deep queue on half a core or less), the limit grows by a quarter an interval', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  saturateFor(load, pacer, 20)
  t.equal(pacer.attemptsPerInterval, 50)
  const limits: number[] = []
  for (let i = 0; i < 3; i++) {
    startsAllowed(pacer)
    load.interval(pacer, { cpu: 1, answered: 1600, waiting: 4 })
    limits.push(pacer.attemptsPerInterval)
  }
  t.same(limits, [63, 79, 99])
  startsAllowed(pacer)
  load.interval(pacer, { cpu: 0.7, answered: 1600, waiting: 12 })
  t.equal(pacer.attemptsPerInterval, 124, '12 waiting with 70% of a core')
  load.interval(pacer, { cpu: 0.5, answered: 1600, waiting: 32 })
  t.equal(pacer.attemptsPerInterval, 155, '32 waiting with half a core')
  load.interval(pacer, { cpu: 1, answered: 1600, waiting: 2 })
  t.equal(pacer.attemptsPerInterval, 310, 'calm: fewer than 3 waiting')
  load.interval(pacer, { cpu: 0.5, answered: 1600, waiting: 12 })
  t.equal(pacer.attemptsPerInterval, 620, 'calm: less than 60% of a core, fewer than 16 waiting')
})

test('a deep queue (16 or more waiting) is saturation once the process uses more than half a core: a service that waits on a store sharing its cores', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  const shares = [0.75, 0.9, 0.56, 0.8, 0.65, 0.98, 0.7, 0.6]
  const limits: number[] = []
  for (const cpu of shares) {
    startsAllowed(pacer, 400)
    load.interval(pacer, { cpu, answered: 800, waiting: 20 })
    limits.push(pacer.attemptsPerInterval)
  }
  t.same(limits, [Number.POSITIVE_INFINITY, 3, 3, 3, 3, 3, 3, 3], 'one attempt for every 256 of the 800 answered, from the second interval on')
  load.interval(pacer, { cpu: 0.5, answered: 800, waiting: 15 })
  t.equal(pacer.attemptsPerInterval, 6, 'calm again below 60% of a core with fewer than 16 waiting')
})

test('a moment\'s saturation between calm intervals holds nothing back, with a deep queue or without', async (t) => {
  for (const moment of [saturated, deeplyQueued]) {
    const load = new FakeLoad()
    const pacer = pacerOn(load)
    for (let i = 0; i < 10; i++) {
      startsAllowed(pacer, 400)
      load.interval(pacer, i % 2 === 0 ? moment : { cpu: 0.5, answered: 200, waiting: 1 })
    }
    t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY, `${moment.waiting} waiting`)
  }
})

test('two saturated intervals at a time without a deep queue, between intervals of a steady load it keeps up with, hold nothing back', async (t) => {
  for (const [between, waitingBetween] of [['calm', 2], ['neither saturated nor calm', 4]] as const) {
    const load = new FakeLoad()
    const pacer = pacerOn(load)
    for (let i = 0; i < 12; i++) {
      startsAllowed(pacer, 400)
      // A whole core used throughout, with 8 requests waiting in two intervals of three.
      load.interval(pacer, { cpu: 1, answered: 200, waiting: i % 3 === 2 ? waitingBetween : 8 })
    }
    t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY, `with an interval ${between} between`)
  }
})

test('the requests waiting are averaged over the rounds of an interval, not read once at its end', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  load.interval(pacer, saturated)
  load.interval(pacer, saturated)
  startsAllowed(pacer, 400)
  // Thirty rounds with 8 waiting, then the interval ends at a moment with none waiting.
  load.waitingNow = 8
  for (let round = 0; round < 30; round++) pacer.tick(load.now + round)
  load.interval(pacer, { cpu: 1, answered: 1600, waiting: 0 })
  t.equal(pacer.attemptsPerInterval, 200)
})

test('an interval is judged only once it has lasted 100 ms', async (t) => {
  const load = new FakeLoad()
  const pacer = pacerOn(load)
  load.interval(pacer, saturated)
  load.interval(pacer, saturated)
  startsAllowed(pacer, 400)
  load.waitingNow = 8
  pacer.tick(load.now + 50)
  t.equal(pacer.attemptsPerInterval, Number.POSITIVE_INFINITY)
  load.interval(pacer, saturated)
  t.equal(pacer.attemptsPerInterval, 200)
})
