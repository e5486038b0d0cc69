import t from 'tap'
import { parseWithBigInts } from '../../src/int64/bigint-json.js'

// What the typed client reads: JSON as JSON.parse reads it, but an integer beyond 2^53 as the
// bigint of its digits.

t.test('an integer beyond 2^53 is a bigint of every digit; everything else as JSON.parse reads it', async (t) => {
  t.same(parseWithBigInts('[{"id":9007199254740993,"n":-9223372036854775808},{"id":5,"x":1.5e300,"y":-0.25}]'),
    [{ id: 9007199254740993n, n: -(2n ** 63n) }, { id: 5, x: 1.5e300, y: -0.25 }])
  t.equal(parseWithBigInts('9007199254740992'), 9007199254740992n, 'a whole document that is one')
  t.equal(parseWithBigInts('9007199254740991'), 9007199254740991, 'the largest safe integer stays a number')
  t.same(parseWithBigInts('{"a":1e30,"b":2.5e19}'), { a: 1e30, b: 2.5e19 }, 'not written as an integer: a number')
})

t.test('strings are left alone, however they look', async (t) => {
  const text = '{"s":"9007199254740993","q":"a \\" 9007199254740993 \\\\","n":9007199254740993,"u":"\\u0039007199254740993"}'
  t.same(parseWithBigInts(text), { s: '9007199254740993', q: 'a " 9007199254740993 \\', n: 9007199254740993n, u: '9007199254740993' })
})

t.test('what is not JSON is refused as JSON.parse refuses it', async (t) => {
  t.throws(() => parseWithBigInts('{"a":}'), SyntaxError)
  t.throws(() => parseWithBigInts('[9007199254740993'), SyntaxError)
})
