import type { IncomingHttpHeaders } from 'node:http'
import { InvalidTextError } from '../errors/api-errors.js'
import { parseJsonExactly } from '../json/parse-json-exactly.js'
import { contentTypeRefusal } from './json-content-type.js'

const utf8 = new TextDecoder('utf-8', { fatal: true })

// A request body as the service reads it: application/json, with charset=utf-8 or none and no
// content coding (else a 415 before a byte of it is parsed), valid UTF-8, then strict JSON. A
// leading UTF-8 byte order mark is ignored, as RFC 8259 allows. Throws the ApiError to answer.
// The mock (src/mock/) reads bodies with it too, so that both refuse a body alike.
export function readJsonBody (headers: IncomingHttpHeaders, body: Uint8Array): unknown {
  const refusal = contentTypeRefusal(headers)
  if (refusal !== undefined) throw refusal
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    throw new InvalidTextError('the body is not valid UTF-8')
  }
  return parseJsonExactly(text)
}
