import { randomInt } from 'node:crypto'

// The random choices of a run (when to kill, how long an outage lasts, which plants to send)
// come from one seed, which the tests print: RELIABILITY_SEED=<seed> repeats that run's choices.
export const reliabilitySeed = readSeed(process.env.RELIABILITY_SEED)

function readSeed (value: string | undefined): number {
  if (value === undefined || value === '') return randomInt(2 ** 31)
  if (!/^\d{1,10}$/.test(value)) throw new Error(`RELIABILITY_SEED="${value}" is not valid: expected a non-negative integer`)
  return Number(value)
}

export interface SeededRandom {
  // A number from 0 up to, not including, 1.
  readonly fraction: () => number
  // An integer from min to max, both included.
  readonly integer: (min: number, max: number) => number
}

// mulberry32: small, and the same sequence from the same seed on every machine and Node version.
export function seededRandom (seed: number): SeededRandom {
  let state = seed >>> 0
  const fraction = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state)
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296
  }
  return { fraction, integer: (min, max) => min + Math.floor(fraction() * (max - min + 1)) }
}
