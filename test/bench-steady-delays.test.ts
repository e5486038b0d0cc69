import t from 'tap'
import { percentileOf } from '../bench/percentile.js'
import { delaysBetween } from '../bench/webhook-scenarios.js'

// The steady rate's delays from each create's 200 to its message's receipt (npm run bench): set
// by plant id, so that the order messages arrive in does not matter, and a plant never received
// is left out and counted as missing rather than as fast.
t.test('each plant is measured from its own 200 to its own receipt', async (t) => {
  const answeredAt = new Map([['1', 1_000], ['2', 1_010], ['3', 1_020]])
  const receivedAt = { 3: 1_021, 1: 1_250, 2: 1_015 }
  t.same(delaysBetween(answeredAt, receivedAt), { matched: 3, p50Ms: 5, p99Ms: 250, maxMs: 250 })
})

t.test('a plant answered and never received, or received and never answered, is not counted', async (t) => {
  const delays = delaysBetween(new Map([['1', 1_000], ['2', 1_000]]), { 1: 1_004, 9: 5_000 })
  t.same(delays, { matched: 1, p50Ms: 4, p99Ms: 4, maxMs: 4 })
})

t.test('of a hundred delays, the 99th percentile is the largest, as every percentile of the bench reads it', async (t) => {
  const answeredAt = new Map(Array.from({ length: 100 }, (_, index) => [String(index), 0]))
  const receivedAt = Object.fromEntries(Array.from({ length: 100 }, (_, index) => [String(index), index < 98 ? 10 : 900 + index]))
  t.same(delaysBetween(answeredAt, receivedAt), { matched: 100, p50Ms: 10, p99Ms: 999, maxMs: 999 })
})

t.test('nothing matched reads as no figure, not as zero', async (t) => {
  const delays = delaysBetween(new Map([['1', 1_000]]), {})
  t.equal(delays.matched, 0)
  t.ok(Number.isNaN(delays.p99Ms))
})

t.test('a percentile is the element at floor(fraction × n) of the sorted list', async (t) => {
  const sorted = Array.from({ length: 1000 }, (_, index) => index)
  t.equal(percentileOf(sorted, 0.5), 500)
  t.equal(percentileOf(sorted, 0.99), 990)
  t.equal(percentileOf([7], 0.99), 7)
  t.ok(Number.isNaN(percentileOf([], 0.5)))
})
