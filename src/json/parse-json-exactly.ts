import { InvalidTextError, MalformedJsonError } from '../errors/api-errors.js'
import { rememberNumberSource } from './number-sources.js'

// A strict JSON reader for request bodies. JSON.parse cannot serve here: it rounds integers
// beyond 2^53 (ids are int64) and silently keeps the last of duplicated keys. This reader keeps
// the source text of every number a double may not hold exactly (see src/int64/), names the
// offending field in every error, and bounds its own recursion. Which strings may be stored (no
// NUL, no lone surrogate) is the schema's to say, for the fields it declares: see
// src/openapi/storable-text.ts. Any property name is a name: `__proto__` is read, as JSON.parse reads
// it, into a property of its own, never into the object's prototype, so no body can give an
// object it reads another prototype; `constructor` is a property like any other.

export const maxNestingDepth = 64

const jsonNumberGrammar = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`
const numberPattern = new RegExp(jsonNumberGrammar, 'y')
const wholeNumberPattern = new RegExp(`^${jsonNumberGrammar}$`)

export function parseJsonExactly (text: string): unknown {
  return new JsonReader(text).readDocument()
}

// Whether the whole text is a number as JSON writes one ("007", "+1" and " 1" are not).
export function isJsonNumber (text: string): boolean {
  return wholeNumberPattern.test(text)
}

// The double a JSON number stands for. JSON has no infinity: a number beyond the doubles (1e400)
// becomes the largest finite double of its sign, and its source text tells its true value where
// it matters.
export function doubleOfJsonNumber (source: string): number {
  const value = Number(source)
  return Number.isFinite(value) ? value : Math.sign(value) * Number.MAX_VALUE
}

const escapes: Record<string, string> = {
  '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t',
}

class JsonReader {
  private position = 0

  constructor (private readonly text: string) {}

  readDocument (): unknown {
    this.skipWhitespace()
    if (this.position === this.text.length) throw new MalformedJsonError('the body is empty')
    const value = this.readValue('body', 0)
    this.skipWhitespace()
    if (this.position !== this.text.length) throw this.syntaxError('the end of the body')
    return value
  }

  private readValue (path: string, depth: number): unknown {
    switch (this.text[this.position]) {
      case '{': return this.readObject(path, depth + 1)
      case '[': return this.readArray(path, depth + 1)
      case '"': return this.readString(path)
      case 't': return this.readLiteral('true', true)
      case 'f': return this.readLiteral('false', false)
      case 'n': return this.readLiteral('null', null)
      default: return this.readNumber().value
    }
  }

  private readObject (path: string, depth: number): Record<string, unknown> {
    this.checkDepth(depth)
    this.position++
    const object: Record<string, unknown> = {}
    this.skipWhitespace()
    if (this.consume('}')) return object
    do {
      this.skipWhitespace()
      if (this.text[this.position] !== '"') throw this.syntaxError('a property name in double quotes')
      const key = this.readString(`${path} property name`)
      const memberPath = `${path}.${key}`
      if (Object.hasOwn(object, key)) throw new MalformedJsonError(`${memberPath} appears more than once`)
      this.skipWhitespace()
      if (!this.consume(':')) throw this.syntaxError('":"')
      this.skipWhitespace()
      const value = this.readMemberValue(object, key, memberPath, depth)
      // An assignment to __proto__ would set the prototype: it is defined, as JSON.parse does.
      if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
      else object[key] = value
      this.skipWhitespace()
    } while (this.consume(','))
    if (!this.consume('}')) throw this.syntaxError('"," or "}"')
    return object
  }

  private readArray (path: string, depth: number): unknown[] {
    this.checkDepth(depth)
    this.position++
    const array: unknown[] = []
    this.skipWhitespace()
    if (this.consume(']')) return array
    do {
      this.skipWhitespace()
      array.push(this.readMemberValue(array, String(array.length), `${path}[${array.length}]`, depth))
      this.skipWhitespace()
    } while (this.consume(','))
    if (!this.consume(']')) throw this.syntaxError('"," or "]"')
    return array
  }

  // The value of an object member or array element; a number keeps its source text when a
  // double may not hold it exactly.
  private readMemberValue (container: object, key: string, path: string, depth: number): unknown {
    if (!this.isNumberStart()) return this.readValue(path, depth)
    const { value, source } = this.readNumber()
    rememberNumberSource(container, key, source, value)
    return value
  }

  private readString (path: string): string {
    const text = this.text
    let position = this.position + 1
    let value = ''
    let runStart = position
    for (;;) {
      const code = text.charCodeAt(position)
      if (Number.isNaN(code)) {
        this.position = position
        throw this.syntaxError('the closing double quote of a string')
      }
      if (code === 0x22) break
      // Unescaped, a NUL is malformed JSON like any control character; it keeps the answer it
      // has always had, and that an escaped NUL gets in a field the spec declares.
      if (code === 0) throw new InvalidTextError(`${path} contains a NUL character`)
      if (code < 0x20) {
        this.position = position
        throw this.syntaxError('an escaped control character')
      }
      if (code !== 0x5c) {
        position++
        continue
      }
      value += text.slice(runStart, position)
      const escape = text[position + 1] ?? ''
      if (escape === 'u') {
        const hex = text.slice(position + 2, position + 6)
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
          this.position = position
          throw this.syntaxError('four hex digits after \\u')
        }
        value += String.fromCharCode(Number.parseInt(hex, 16))
        position += 6
      } else {
        const unescaped = escapes[escape]
        if (unescaped === undefined) {
          this.position = position
          throw this.syntaxError('a valid escape sequence')
        }
        value += unescaped
        position += 2
      }
      runStart = position
    }
    value += text.slice(runStart, position)
    this.position = position + 1
    return value
  }

  private readNumber (): { value: number, source: string } {
    numberPattern.lastIndex = this.position
    const match = numberPattern.exec(this.text)
    if (match === null) throw this.syntaxError('a JSON value')
    const source = match[0]
    this.position += source.length
    return { value: doubleOfJsonNumber(source), source }
  }

  private readLiteral<T> (word: string, value: T): T {
    if (!this.text.startsWith(word, this.position)) throw this.syntaxError('a JSON value')
    this.position += word.length
    return value
  }

  private isNumberStart (): boolean {
    const code = this.text.charCodeAt(this.position)
    return code === 0x2d || (code >= 0x30 && code <= 0x39)
  }

  private checkDepth (depth: number): void {
    if (depth > maxNestingDepth) {
      throw new MalformedJsonError(`the body nests deeper than ${maxNestingDepth} levels`)
    }
  }

  private consume (char: string): boolean {
    if (this.text[this.position] !== char) return false
    this.position++
    return true
  }

  private skipWhitespace (): void {
    for (;;) {
      const code = this.text.charCodeAt(this.position)
      if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return
      this.position++
    }
  }

  private syntaxError (expected: string): MalformedJsonError {
    const found = this.position < this.text.length
      ? JSON.stringify(this.text.slice(this.position, this.position + 10))
      : 'the end of the body'
    return new MalformedJsonError(`invalid JSON at character ${this.position}: expected ${expected}, found ${found}`)
  }
}
