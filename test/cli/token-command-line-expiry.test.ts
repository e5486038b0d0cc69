import t from 'tap'
import { parseTokenExpiry, UsageError } from '../../src/cli/token-command-line.js'

const now = new Date('2026-03-04T05:06:07.089Z')

t.test('a duration counts minutes, hours or days from now', async (t) => {
  t.same(parseTokenExpiry('30m', now), new Date('2026-03-04T05:36:07.089Z'))
  t.same(parseTokenExpiry('12h', now), new Date('2026-03-04T17:06:07.089Z'))
  t.same(parseTokenExpiry('30d', now), new Date('2026-04-03T05:06:07.089Z'))
  t.same(parseTokenExpiry('1d', now), new Date('2026-03-05T05:06:07.089Z'))
})

t.test('a date is its midnight UTC; a date and time is the instant its offset says', async (t) => {
  t.same(parseTokenExpiry('2027-01-31', now), new Date('2027-01-31T00:00:00.000Z'))
  t.same(parseTokenExpiry('2027-01-31T18:00Z', now), new Date('2027-01-31T18:00:00.000Z'))
  t.same(parseTokenExpiry('2027-01-31T18:00:30.5Z', now), new Date('2027-01-31T18:00:30.500Z'))
  t.same(parseTokenExpiry('2027-01-31T18:00:00+02:00', now), new Date('2027-01-31T16:00:00.000Z'))
  t.same(parseTokenExpiry('2027-01-31T18:00-05:30', now), new Date('2027-01-31T23:30:00.000Z'))
  t.same(parseTokenExpiry('2028-02-29', now), new Date('2028-02-29T00:00:00.000Z'), 'a leap day')
  t.same(parseTokenExpiry('9999-12-31', now), new Date('9999-12-31T00:00:00.000Z'), 'the latest date the stores keep')
})

t.test('what is none of those forms is refused', async (t) => {
  for (const text of [
    '', '30', 'd', '30 d', '30D', '30s', '30w', '-1d', '1.5h', 'P30D', '+30d', '30d ',
    '2027-1-31', '27-01-31', '2027-01-31T18:00', '2027-01-31T18:00:00', '2027-01-31 18:00Z', '2027-01-31t18:00z',
    '2027-02-30', '2027-02-29', '2027-13-01', '2027-00-10', '2027-01-32', '2027-01-31T24:00Z', '2027-01-31T18:60Z', '2027-01-31T18:00+25:00',
    'tomorrow', 'Sun, 31 Jan 2027 18:00:00 GMT',
  ]) {
    t.throws(() => parseTokenExpiry(text, now), UsageError, JSON.stringify(text))
  }
})

t.test('an expiry that is not in the future is refused, saying when it would be and when now is', async (t) => {
  for (const text of ['0m', '0d', '2026-03-04', '2026-03-04T05:06:07.089Z', '2020-01-01T00:00Z']) {
    t.throws(() => parseTokenExpiry(text, now), { name: 'UsageError', message: /is not in the future: .*now is 2026-03-04T05:06:07\.089Z/ }, text)
  }
  t.same(parseTokenExpiry('2026-03-04T05:06:07.090Z', now), new Date('2026-03-04T05:06:07.090Z'), 'a millisecond ahead will do')
})

t.test('an expiry beyond the year 9999 is refused, however far', async (t) => {
  for (const text of ['3000000d', '99999999999999999999d', '+010000-01-01']) {
    t.throws(() => parseTokenExpiry(text, now), UsageError, text)
  }
})
