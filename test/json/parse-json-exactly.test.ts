import t, { type Test } from 'tap'
import {
  type ApiError, InvalidTextError, MalformedJsonError,
} from '../../src/errors/api-errors.js'
import { numberSourceOf } from '../../src/json/number-sources.js'
import { maxNestingDepth, parseJsonExactly } from '../../src/json/parse-json-exactly.js'

// parseJsonExactly reads RFC 8259 JSON and nothing more, names the offending field in every
// error, and keeps the source text of the numbers a double may not hold exactly.

type ApiErrorClass = abstract new (...args: never[]) => ApiError

function rejectionOf (text: string): unknown {
  try {
    parseJsonExactly(text)
  } catch (error) {
    return error
  }
  return undefined
}

// A printable ASCII name for a test text: U+2028 and the like would break TAP's lines.
function nameOf (text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)
    .replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function assertRejected (t: Test, text: string, errorClass: ApiErrorClass, message: string | RegExp, code: number): void {
  const name = nameOf(text)
  const error = rejectionOf(text)
  t.ok(error instanceof errorClass, `${name} is rejected with a ${errorClass.name}`)
  t.match(error, { statusCode: 400, code, message }, name)
}

function assertMalformed (t: Test, text: string, message: string | RegExp): void {
  assertRejected(t, text, MalformedJsonError, message, 40001)
}

function assertInvalidText (t: Test, text: string, message: string): void {
  assertRejected(t, text, InvalidTextError, message, 40002)
}

t.test('valid JSON reads as JSON.parse reads it', async (t) => {
  const documents = [
    'true', 'false', 'null', '0', '-0', '42', '-1.5e2', '1E+2', '0.25', '"text"', '""',
    '{}', '[]', '[[]]', '{"a":{}}',
    '{"a":[1,{"b":[true,false,null]},"s"],"c":{},"d":-0.5}',
    '[1,"two",{"three":[3]},null,[[]]]',
    '{"toString":1,"hasOwnProperty":2,"prototype":3,"__proto":4,"Constructor":5,"valueOf":{}}',
    '{"":"empty key","a b":"space","ünï":"çødé"}',
  ]
  for (const text of documents) t.same(parseJsonExactly(text), JSON.parse(text), text)
})

t.test('-0 stays negative zero', async (t) => {
  t.ok(Object.is(parseJsonExactly('-0'), -0))
  t.ok(Object.is((parseJsonExactly('{"a":-0}') as { a: unknown }).a, -0))
})

t.test('property names such as toString become own properties', async (t) => {
  const parsed = parseJsonExactly('{"toString":1,"hasOwnProperty":2}') as Record<string, unknown>
  t.ok(Object.hasOwn(parsed, 'toString'))
  t.equal(parsed.toString, 1)
  t.equal(parsed.hasOwnProperty, 2)
  t.equal(Object.getPrototypeOf(parsed), Object.prototype)
})

t.test('every escape of RFC 8259 is read', async (t) => {
  const cases: ReadonlyArray<[string, string]> = [
    ['"\\n"', '\n'],
    ['"\\t"', '\t'],
    ['"\\""', '"'],
    ['"\\\\"', '\\'],
    ['"\\/"', '/'],
    ['"\\b"', '\b'],
    ['"\\f"', '\f'],
    ['"\\r"', '\r'],
    ['"\\u0041"', 'A'],
    ['"\\u00e9"', 'é'],
    ['"\\u20AC"', '€'],
    ['"\\u20ac"', '€'],
    ['"\\u001f"', '\u001f'],
    ['"\\ud83c\\udf35"', '🌵'],
    ['"\\uD83C\\uDF35"', '🌵'],
    ['"a\\nb\\tc\\"d\\\\e\\/f"', 'a\nb\tc"d\\e/f'],
    ['"\\\\n"', '\\n'],
    ['"\\"\\""', '""'],
    ['"before \\u0041 after"', 'before A after'],
    ['"🌵 raw é"', '🌵 raw é'],
  ]
  for (const [text, expected] of cases) t.equal(parseJsonExactly(text), expected, text)
  t.same(parseJsonExactly('{"\\u0061\\n":"\\u0062"}'), { 'a\n': 'b' }, 'escapes in a property name')
})

t.test('a malformed escape is malformed JSON', async (t) => {
  assertMalformed(t, '"\\x41"', 'invalid JSON at character 1: expected a valid escape sequence, found "\\\\x41\\""')
  assertMalformed(t, '"\\\'"', /expected a valid escape sequence/)
  assertMalformed(t, '"\\U0041"', /expected a valid escape sequence/)
  assertMalformed(t, '"a\\u12"', 'invalid JSON at character 2: expected four hex digits after \\u, found "\\\\u12\\""')
  assertMalformed(t, '"\\u12G4"', /expected four hex digits after \\u/)
  assertMalformed(t, '"\\u"', /expected four hex digits after \\u/)
  assertMalformed(t, '"\\', /expected a valid escape sequence/)
})

t.test('a raw control character in a string is malformed JSON', async (t) => {
  for (const char of ['\n', '\t', '\r', '\u001f']) {
    assertMalformed(t, `"a${char}b"`, /^invalid JSON at character 2: expected an escaped control character/)
  }
  t.equal(parseJsonExactly('"\u007f"'), '\u007f', 'DEL is not a control character in JSON')
})

t.test('a raw NUL in a string is invalid text, wherever it is', async (t) => {
  assertInvalidText(t, '{"name":"a\u0000b"}', 'body.name contains a NUL character')
  assertInvalidText(t, '{"a":{"b":["\u0000"]}}', 'body.a.b[0] contains a NUL character')
  assertInvalidText(t, '{"a\u0000":1}', 'body property name contains a NUL character')
})

t.test('the four JSON whitespace characters are allowed between any two tokens', async (t) => {
  const ws = ' \t\n\r'
  const text = `${ws}{${ws}"a"${ws}:${ws}[${ws}1${ws},${ws}true${ws},${ws}"s"${ws}]${ws},${ws}"b"${ws}:${ws}{${ws}}${ws}}${ws}`
  t.same(parseJsonExactly(text), { a: [1, true, 's'], b: {} })
  t.same(parseJsonExactly('[ ]'), [])
  t.same(parseJsonExactly('{ }'), {})
})

t.test('nothing else is whitespace', async (t) => {
  for (const char of ['\f', '\v', '\u00a0', '\ufeff', '\u2028', '\u3000']) {
    assertMalformed(t, `${char}{}`, /^invalid JSON at character 0: expected a JSON value/)
    assertMalformed(t, `{}${char}`, /^invalid JSON at character 2: expected the end of the body/)
    assertMalformed(t, `{${char}"a":1}`, /^invalid JSON at character 1: expected a property name in double quotes/)
    assertMalformed(t, `[1,${char}2]`, /^invalid JSON at character 3: expected a JSON value/)
  }
})

t.test('an empty or whitespace-only text is an empty body', async (t) => {
  for (const text of ['', ' ', '\n\t\r ']) assertMalformed(t, text, 'the body is empty')
})

t.test('syntax errors say where, what was expected and what was found', async (t) => {
  const cases: ReadonlyArray<[string, string]> = [
    ['{"a":1 x}', 'invalid JSON at character 7: expected "," or "}", found "x}"'],
    ['[1 2]', 'invalid JSON at character 3: expected "," or "]", found "2]"'],
    ['{"a" 1}', 'invalid JSON at character 5: expected ":", found "1}"'],
    ['{"a":}', 'invalid JSON at character 5: expected a JSON value, found "}"'],
    ['{"a":1,}', 'invalid JSON at character 7: expected a property name in double quotes, found "}"'],
    ['{a:1}', 'invalid JSON at character 1: expected a property name in double quotes, found "a:1}"'],
    ["{'a':1}", 'invalid JSON at character 1: expected a property name in double quotes, found "\'a\':1}"'],
    ['[1,]', 'invalid JSON at character 3: expected a JSON value, found "]"'],
    ['[', 'invalid JSON at character 1: expected a JSON value, found the end of the body'],
    ['{"a":1', 'invalid JSON at character 6: expected "," or "}", found the end of the body'],
    ['"abc', 'invalid JSON at character 4: expected the closing double quote of a string, found the end of the body'],
    ['{}{}', 'invalid JSON at character 2: expected the end of the body, found "{}"'],
    ['{"a":1} xxxxxxxxxxxxxxxxxxxx', 'invalid JSON at character 8: expected the end of the body, found "xxxxxxxxxx"'],
  ]
  for (const [text, message] of cases) assertMalformed(t, text, message)
})

t.test('only RFC 8259 literals and numbers are values', async (t) => {
  for (const text of ['tru', 'nul', 'fals', 'True', 'NULL', 'NaN', 'Infinity', '-Infinity', 'undefined', '-', '+1', '.5', '\'a\'', '/* c */1']) {
    assertMalformed(t, text, /^invalid JSON at character 0: expected a JSON value/)
  }
  for (const text of ['01', '-01', '1.', '1.e5', '1e', '1e+', '0x10', '1_000', 'truex', 'null null']) {
    assertMalformed(t, text, /^invalid JSON at character \d+: expected the end of the body/)
  }
  assertMalformed(t, '{"a":01}', 'invalid JSON at character 6: expected "," or "}", found "1}"')
  assertMalformed(t, '{"a":-}', /^invalid JSON at character 5: expected a JSON value/)
})

t.test('a duplicated key is malformed JSON that names the key', async (t) => {
  assertMalformed(t, '{"a":1,"a":1}', 'body.a appears more than once')
  assertMalformed(t, '{"a":{"b":1,"b":2}}', 'body.a.b appears more than once')
  assertMalformed(t, '{"list":[1,2,{"k":1,"k":2}]}', 'body.list[2].k appears more than once')
  assertMalformed(t, '{"a":1,"\\u0061":2}', 'body.a appears more than once')
  t.same(parseJsonExactly('{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}'), { a: 1, b: { a: 2 }, c: [{ a: 3 }, { a: 4 }] },
    'the same key in different objects is no duplicate')
})

t.test('__proto__ and constructor are read as JSON.parse reads them: properties of their own, never a prototype', async (t) => {
  for (const text of ['{"__proto__":{"polluted":true}}', '{"a":{"b":{"__proto__":{"polluted":true}}}}', '[{"constructor":{"prototype":{"x":1}}}]',
    '{"\\u005f_proto__":{"polluted":true}}', '{"constructo\\u0072":1}', '{"list":[1,2,{"__proto__":[1]}]}']) {
    const read = parseJsonExactly(text)
    t.same(read, JSON.parse(text), text)
    t.equal(JSON.stringify(read), JSON.stringify(JSON.parse(text)), `${text}: written back the same`)
  }
  const read = parseJsonExactly('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>
  t.equal(Object.getPrototypeOf(read), Object.prototype, 'the object keeps its prototype')
  t.ok(Object.hasOwn(read, '__proto__'), '__proto__ is a property of its own')
  t.equal(read.polluted, undefined, 'that lends the object nothing')
  t.notOk(Object.hasOwn(Object.prototype, 'polluted'), 'Object.prototype is not polluted')
})

t.test('an escaped NUL or lone surrogate is read as it is: the schema decides where they are refused', async (t) => {
  t.same(parseJsonExactly('{"name":"a\\u0000b"}'), { name: 'a\u0000b' })
  t.same(parseJsonExactly('{"a":{"b\\u0000":["\\u0000"]}}'), { a: { 'b\u0000': ['\u0000'] } })
  t.same(parseJsonExactly('{"a":"\\udf35\\ud83c","\\ud800":1}'), { a: '\udf35\ud83c', '\ud800': 1 })
  t.equal(parseJsonExactly('"\\ud83c\\udf35"'), '🌵', 'an escaped pair is one character')
  t.equal(parseJsonExactly('"\\ud83c\udf35"'), '🌵', 'an escaped high and a raw low surrogate make a pair')
})

t.test('nesting is bounded at 64 levels', async (t) => {
  t.equal(maxNestingDepth, 64)
  const arrays = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels)
  const objects = (levels: number): string => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1)
  t.ok(Array.isArray(parseJsonExactly(arrays(64))), '64 levels of arrays')
  t.ok(typeof parseJsonExactly(objects(64)) === 'object', '64 levels of objects')
  t.same(parseJsonExactly(`{"a":[{"b":${arrays(61)}}]}`), { a: [{ b: JSON.parse(arrays(61)) as unknown }] }, '64 levels, mixed')
  assertMalformed(t, arrays(65), 'the body nests deeper than 64 levels')
  assertMalformed(t, objects(65), 'the body nests deeper than 64 levels')
  assertMalformed(t, `{"a":[{"b":${arrays(62)}}]}`, 'the body nests deeper than 64 levels')
  t.equal((parseJsonExactly(`[${Array(1000).fill(arrays(63)).join(',')}]`) as unknown[]).length, 1000, 'breadth is not depth')

  const started = performance.now()
  assertMalformed(t, '['.repeat(1_000_000), 'the body nests deeper than 64 levels')
  t.ok(performance.now() - started < 1000, 'a million levels are refused in well under a second')
})

t.test('numberSourceOf keeps the text of a number only when a double may not hold it', async (t) => {
  const parsed = parseJsonExactly(
    '{"small":123,"fifteen":-999999999999999,"sixteen":1000000000000000,"largestSafe":9007199254740991,' +
    '"smallestSafe":-9007199254740991,"twoTo53":9007199254740992,"belowSafe":-9007199254740992,"big":9007199254740993,' +
    '"seventeen":10000000000000000,"integerByExponent":1e15,' +
    '"fraction":1.5,"tenth":0.1,"exponent":1E+3,"integral":1.0,"negativeZero":-0,"zeroPoint":-0.0,' +
    '"string":"9007199254740993","bool":true,"none":null}') as Record<string, unknown>
  t.equal(numberSourceOf(parsed, 'small'), undefined, 'a short integer')
  t.equal(numberSourceOf(parsed, 'fifteen'), undefined, 'an integer of 15 digits')
  t.equal(numberSourceOf(parsed, 'negativeZero'), undefined, '-0')
  t.equal(numberSourceOf(parsed, 'sixteen'), undefined, 'an integer of 16 digits a double holds (ids drawn across 2^52)')
  t.equal(numberSourceOf(parsed, 'largestSafe'), undefined, '2^53 - 1')
  t.equal(numberSourceOf(parsed, 'smallestSafe'), undefined, '-(2^53 - 1)')
  t.equal(numberSourceOf(parsed, 'twoTo53'), '9007199254740992', '2^53, which 2^53 + 1 also reads as')
  t.equal(numberSourceOf(parsed, 'belowSafe'), '-9007199254740992')
  t.equal(numberSourceOf(parsed, 'seventeen'), '10000000000000000', 'an integer of 17 digits')
  t.equal(numberSourceOf(parsed, 'integerByExponent'), '1e15', 'an exponent, whatever its value')
  t.equal(numberSourceOf(parsed, 'big'), '9007199254740993')
  t.equal(parsed.big, 9007199254740992, 'while the parsed value is the nearest double')
  t.equal(numberSourceOf(parsed, 'fraction'), '1.5')
  t.equal(numberSourceOf(parsed, 'tenth'), '0.1')
  t.equal(numberSourceOf(parsed, 'exponent'), '1E+3', 'the text exactly as sent')
  t.equal(numberSourceOf(parsed, 'integral'), '1.0')
  t.equal(numberSourceOf(parsed, 'zeroPoint'), '-0.0')
  t.equal(numberSourceOf(parsed, 'string'), undefined, 'a string is not a number')
  t.equal(numberSourceOf(parsed, 'bool'), undefined)
  t.equal(numberSourceOf(parsed, 'none'), undefined)
  t.equal(numberSourceOf(parsed, 'missing'), undefined)
})

t.test('numberSourceOf belongs to the object that holds the number', async (t) => {
  const parsed = parseJsonExactly('{"a":{"b":9007199254740993},"b":12345678901234567890}') as Record<string, Record<string, unknown>>
  t.equal(numberSourceOf(parsed, 'a'), undefined, 'an object is not a number')
  t.equal(numberSourceOf(parsed.a ?? {}, 'b'), '9007199254740993')
  t.equal(numberSourceOf(parsed, 'b'), '12345678901234567890')

  const again = parseJsonExactly('{"b":12345678901234567891}') as object
  t.equal(numberSourceOf(again, 'b'), '12345678901234567891', 'each parse keeps its own')
  t.equal(numberSourceOf(parsed, 'b'), '12345678901234567890', 'and leaves the others alone')
  t.equal(numberSourceOf({ b: 2 ** 64 }, 'b'), undefined, 'an object the reader did not make')
})
