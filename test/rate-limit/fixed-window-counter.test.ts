import t from 'tap'
import { FixedWindowCounter } from '../../src/rate-limit/fixed-window-counter.js'

// The counter's own rules, on a clock the test moves: limits per key, windows that end on the
// clock's multiples of their length, and at most maxKeys keys counted apart in one window.

function counterAt (startMs: number, options: { limit?: number, windowSeconds?: number, maxKeys?: number } = {}) {
  const clock = { now: startMs }
  const counter = new FixedWindowCounter({
    limit: options.limit ?? 3,
    windowSeconds: options.windowSeconds ?? 60,
    maxKeys: options.maxKeys ?? 1000,
    now: () => clock.now,
  })
  return { counter, clock }
}

t.test('a key is allowed its limit in a window, then refused; other keys count apart', async (t) => {
  const { counter } = counterAt(0)
  t.same([counter.hit('a'), counter.hit('a'), counter.hit('a'), counter.hit('a'), counter.hit('a')], [true, true, true, false, false])
  t.same([counter.hit('b'), counter.hit('b')], [true, true], 'another key has its own count')
})

t.test('isExhausted reads without counting', async (t) => {
  const { counter } = counterAt(0, { limit: 2 })
  for (let i = 0; i < 10; i++) t.notOk(counter.isExhausted('a'), `read ${i + 1}`)
  counter.hit('a')
  t.notOk(counter.isExhausted('a'), 'one of two used')
  counter.hit('a')
  t.ok(counter.isExhausted('a'), 'both used')
  t.notOk(counter.isExhausted('b'), 'another key is not')
})

t.test('a window ends on a multiple of its length, and the next one starts from nothing', async (t) => {
  const { counter, clock } = counterAt(125_000, { limit: 1, windowSeconds: 60 })
  t.ok(counter.hit('a'))
  t.notOk(counter.hit('a'), 'refused in the window 120-180 s')
  t.equal(counter.secondsUntilReset(), 55, 'the window ends at 180 s')
  clock.now = 179_999
  t.notOk(counter.hit('a'), 'still refused 1 ms before it ends')
  t.equal(counter.secondsUntilReset(), 1, 'a part of a second left is a whole second')
  clock.now = 180_000
  t.ok(counter.hit('a'), 'allowed again once it ends')
  t.equal(counter.keyCount, 1, 'the keys of the ended window are gone')
  t.equal(counter.secondsUntilReset(), 60)
})

t.test('seconds until reset are a whole number from 1 to the window length', async (t) => {
  const { counter, clock } = counterAt(0, { windowSeconds: 10 })
  for (let ms = 0; ms < 20_000; ms += 250) {
    clock.now = ms
    const seconds = counter.secondsUntilReset()
    if (!(Number.isInteger(seconds) && seconds >= 1 && seconds <= 10)) t.fail(`${seconds} at ${ms} ms`)
  }
  clock.now = 0
  t.equal(counter.secondsUntilReset(), 10, 'the whole window at its start')
})

t.test('a clock set back starts a new window rather than holding this one', async (t) => {
  const { counter, clock } = counterAt(3_600_000, { limit: 1, windowSeconds: 60 })
  counter.hit('a')
  t.notOk(counter.hit('a'))
  clock.now = 0
  t.ok(counter.hit('a'), 'an hour back: counted afresh')
  t.equal(counter.secondsUntilReset(), 60, 'in the window of the clock as it now reads')
})

t.test('past maxKeys, new keys share one overflow counter, and the known keys keep their own', async (t) => {
  const { counter, clock } = counterAt(0, { limit: 2, maxKeys: 3 })
  for (const key of ['a', 'b', 'c']) counter.hit(key)
  t.equal(counter.keyCount, 3)
  t.ok(counter.hit('d'), 'a fourth key: the overflow counter at 1')
  t.ok(counter.hit('e'), 'a fifth: the overflow counter at 2')
  t.notOk(counter.hit('f'), 'a sixth is refused: the overflow counter is over the limit')
  t.ok(counter.isExhausted('g'), 'and any new key reads as the overflow counter')
  t.equal(counter.keyCount, 3, 'no key was added')
  t.ok(counter.hit('a'), 'a key counted apart is unaffected')
  t.notOk(counter.isExhausted('b'))
  clock.now = 60_000
  t.ok(counter.hit('f'), 'a new window has room again')
  t.notOk(counter.isExhausted('g'))
})

t.test('a hundred thousand keys in one window stay within the bound', async (t) => {
  const { counter } = counterAt(0, { limit: 1, maxKeys: 100_000 })
  for (let i = 0; i < 150_000; i++) counter.hit(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`)
  t.equal(counter.keyCount, 100_000)
})
