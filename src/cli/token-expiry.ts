import { UsageError } from './usage-error.js'

const unitMs = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const
const duration = /^(\d+)([mhd])$/
// A date-time must say its offset: the same text read in the local time zone of whoever runs
// the tool would expire at another instant on another machine.
const isoDate = /^(\d{4})-(\d{2})-(\d{2})$/
const isoDateTime = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,3})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/
// The SQLite store keeps times as four-digit-year ISO text (migration 3).
const latestExpiry = Date.parse('9999-12-31T23:59:59.999Z')

const tokenExpiryForms = '30m, 12h or 30d (minutes, hours or days from now), an ISO-8601 date ' +
  '(2027-01-31, at midnight UTC) or date and time with its offset (2027-01-31T18:00:00Z, 2027-01-31T18:00+02:00)'

// When a token given `--expires text` at `now` expires; a UsageError when the text is none of
// tokenExpiryForms, or is not after `now`.
export function parseTokenExpiry (text: string, now: Date): Date {
  const expiresAt = expiryOf(text, now)
  if (expiresAt === undefined) throw new UsageError(`--expires ${JSON.stringify(text)} is not one of ${tokenExpiryForms}`)
  // NaN too: a duration beyond what a Date holds.
  if (!(expiresAt.getTime() <= latestExpiry)) throw new UsageError(`--expires ${text} is too far ahead: the latest expiry is 9999-12-31`)
  if (expiresAt.getTime() <= now.getTime()) {
    throw new UsageError(`--expires ${text} is not in the future: it is ${expiresAt.toISOString()}, and now is ${now.toISOString()}`)
  }
  return expiresAt
}

function expiryOf (text: string, now: Date): Date | undefined {
  const [, amount, unit] = duration.exec(text) ?? []
  if (amount !== undefined && unit !== undefined) return new Date(now.getTime() + Number(amount) * unitMs[unit as keyof typeof unitMs])
  const [, year, month, day] = isoDate.exec(text) ?? isoDateTime.exec(text) ?? []
  if (year === undefined || month === undefined || day === undefined) return undefined
  // Date.parse reads 2027-02-30 as March 2nd: the day must exist in its month.
  const date = `${year}-${month}-${day}`
  const midnight = Date.parse(`${date}T00:00Z`)
  if (Number.isNaN(midnight) || new Date(midnight).toISOString().slice(0, 10) !== date) return undefined
  return new Date(Date.parse(text))
}
