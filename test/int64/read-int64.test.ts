import t from 'tap'
import { type Int64Reading, readInt64 } from '../../src/int64/read-int64.js'
import { parseJsonExactly } from '../../src/json/parse-json-exactly.js'

// readInt64 reads the number as it was sent, not the double JSON makes of it: a number is an
// int64 when its exact decimal value is an integer from -2^63 to 2^63-1.

const int64Min = -(2n ** 63n)
const int64Max = 2n ** 63n - 1n

function parsedWith (lexeme: string): Record<string, unknown> {
  return parseJsonExactly(`{"n":${lexeme}}`) as Record<string, unknown>
}

function int64Of (lexeme: string): Int64Reading {
  return readInt64(parsedWith(lexeme), 'n')
}

t.test('integers written in any JSON form are integers', async (t) => {
  const cases: ReadonlyArray<[string, Int64Reading]> = [
    ['0', 0n],
    ['-0', 0n],
    ['0.0', 0n],
    ['-0.0e-5', 0n],
    ['0e400', 0n],
    ['7', 7n],
    ['-1', -1n],
    ['1.0', 1n],
    ['1e3', 1000n],
    ['1E3', 1000n],
    ['1E+3', 1000n],
    ['1e+3', 1000n],
    ['10e-1', 1n],
    ['0.50e1', 5n],
    ['123.4500e2', 12345n],
    ['0.00000000000000000001e20', 1n],
    ['1e18', 10n ** 18n],
    ['-1e18', -(10n ** 18n)],
    ['100000000000000000000e-2', 10n ** 18n],
    ['123456789012345', 123456789012345n],
    ['-123456789012345', -123456789012345n],
    ['1234567890123456', 1234567890123456n],
  ]
  for (const [lexeme, expected] of cases) t.equal(int64Of(lexeme), expected, lexeme)
})

t.test('-0 is the integer 0, not negative zero', async (t) => {
  const value = int64Of('-0')
  t.equal(typeof value, 'bigint')
  t.equal(value, 0n)
})

t.test('integers beyond 2^53 are read exactly, not as the double JSON makes of them', async (t) => {
  const cases: ReadonlyArray<[string, bigint]> = [
    ['9007199254740992', 9007199254740992n],
    ['9007199254740993', 9007199254740993n],
    ['-9007199254740993', -9007199254740993n],
    ['9007199254740993.0', 9007199254740993n],
    ['900719925474099.3e1', 9007199254740993n],
    ['1234567890123456789', 1234567890123456789n],
  ]
  for (const [lexeme, expected] of cases) t.equal(int64Of(lexeme), expected, lexeme)
  const parsed = parseJsonExactly('{"odd":9007199254740993,"even":9007199254740992}') as Record<string, unknown>
  t.equal(parsed.odd, parsed.even, 'the parsed doubles are equal')
  t.not(readInt64(parsed, 'odd'), readInt64(parsed, 'even'), 'the int64s are not')
})

t.test('the int64 boundaries are integers, one past them is not', async (t) => {
  const cases: ReadonlyArray<[string, Int64Reading]> = [
    ['9223372036854775807', int64Max],
    ['-9223372036854775808', int64Min],
    ['9.223372036854775807e18', int64Max],
    ['-9.223372036854775808e18', int64Min],
    ['92233720368547758070e-1', int64Max],
    ['9223372036854775807.000', int64Max],
    ['9223372036854775808', 'out-of-range'],
    ['-9223372036854775809', 'out-of-range'],
    ['9.223372036854775808e18', 'out-of-range'],
    ['-9.223372036854775809e18', 'out-of-range'],
    ['10000000000000000000', 'out-of-range'],
    ['1e19', 'out-of-range'],
    ['-1e19', 'out-of-range'],
  ]
  for (const [lexeme, expected] of cases) t.equal(int64Of(lexeme), expected, lexeme)
})

t.test('a number that is not an integer is not an int64, however large its double', async (t) => {
  for (const lexeme of ['1.5', '-1.5', '0.1', '5e-1', '500e-3', '1000e-5', '123.45e1', '1e-400', '9007199254740993.5', '12345678901234567890.5']) {
    t.equal(int64Of(lexeme), 'not-an-integer', lexeme)
  }
})

t.test('1e400 parses to the largest finite double of its sign and is out of range', async (t) => {
  for (const lexeme of ['1e400', '-1e400']) {
    const parsed = parsedWith(lexeme)
    t.equal(Math.abs(parsed.n as number), Number.MAX_VALUE, `${lexeme} is parsed as a finite double`)
    t.equal(readInt64(parsed, 'n'), 'out-of-range', lexeme)
  }
})

t.test('1e-400 parses to 0 but is not an integer', async (t) => {
  const parsed = parsedWith('1e-400')
  t.equal(parsed.n, 0)
  t.equal(readInt64(parsed, 'n'), 'not-an-integer')
})

t.test('huge exponents are answered quickly', async (t) => {
  const cases: ReadonlyArray<[string, Int64Reading]> = [
    ['1e999999999', 'out-of-range'],
    ['-1e999999999', 'out-of-range'],
    ['1e-999999999', 'not-an-integer'],
    ['0e999999999', 0n],
    ['0.0e-999999999', 0n],
    [`1e${'9'.repeat(10_000)}`, 'out-of-range'],
    [`1e-${'9'.repeat(10_000)}`, 'not-an-integer'],
    [`1${'0'.repeat(10_000)}e-10000`, 1n],
  ]
  for (const [lexeme, expected] of cases) {
    const name = lexeme.length > 30 ? `${lexeme.slice(0, 27)}...` : lexeme
    const started = performance.now()
    const value = int64Of(lexeme)
    const elapsed = performance.now() - started
    t.equal(value, expected, name)
    t.ok(elapsed < 100, `${name}: ${elapsed.toFixed(1)} ms, under 100 ms`)
  }
})

t.test('only numbers are int64s', async (t) => {
  for (const lexeme of ['"12"', '"9007199254740993"', 'true', 'null', '[5]', '{}']) {
    t.equal(int64Of(lexeme), 'not-an-integer', lexeme)
  }
  t.equal(readInt64(parseJsonExactly('{}') as object, 'n'), 'not-an-integer', 'a missing property')
})

t.test('a property is read from its own object', async (t) => {
  const parsed = parseJsonExactly('{"a":9007199254740993,"o":{"a":9007199254740995},"b":12}') as Record<string, unknown>
  t.equal(readInt64(parsed, 'a'), 9007199254740993n)
  t.equal(readInt64(parsed.o as object, 'a'), 9007199254740995n)
  t.equal(readInt64(parsed, 'b'), 12n)
})

t.test('a number that did not come from the JSON reader is trusted only when it is a safe integer', async (t) => {
  t.equal(readInt64({ n: 5 }, 'n'), 5n)
  t.equal(readInt64({ n: -0 }, 'n'), 0n)
  t.equal(readInt64({ n: Number.MAX_SAFE_INTEGER }, 'n'), 9007199254740991n)
  t.equal(readInt64({ n: Number.MIN_SAFE_INTEGER }, 'n'), -9007199254740991n)
  t.equal(readInt64({ n: 2 ** 53 }, 'n'), 'not-an-integer', '2^53 may stand for 2^53+1')
  t.equal(readInt64({ n: 1e19 }, 'n'), 'not-an-integer')
  t.equal(readInt64({ n: 1.5 }, 'n'), 'not-an-integer')
  t.equal(readInt64({ n: Number.NaN }, 'n'), 'not-an-integer')
  t.equal(readInt64({ n: Infinity }, 'n'), 'not-an-integer')
  t.equal(readInt64({ n: '5' }, 'n'), 'not-an-integer')
  t.equal(readInt64({ n: 5n }, 'n'), 'not-an-integer')
  t.equal(readInt64({}, 'n'), 'not-an-integer')
})
