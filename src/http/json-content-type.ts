import type { IncomingHttpHeaders } from 'node:http'
import { UnsupportedMediaTypeError } from '../errors/api-errors.js'

const charsetParameter = /;\s*charset\s*=\s*"?([^";\s]*)"?/gi
// The spellings nearly every client sends, accepted without parsing them.
const commonJsonContentTypes = new Set(['application/json', 'application/json; charset=utf-8'])

// Why a body sent with these headers would not be read (a 415), or undefined when it would:
// application/json, with charset=utf-8 or none, and no content coding.
export function contentTypeRefusal (headers: IncomingHttpHeaders): UnsupportedMediaTypeError | undefined {
  const contentType = headers['content-type']
  if (contentType !== undefined && commonJsonContentTypes.has(contentType) && headers['content-encoding'] === undefined) {
    return undefined
  }
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase()
  const charsets = [...(contentType ?? '').matchAll(charsetParameter)].map((match) => String(match[1]).toLowerCase())
  if (mediaType !== 'application/json' || charsets.some((charset) => charset !== 'utf-8')) {
    return UnsupportedMediaTypeError.forContentType(contentType)
  }
  const encoding = headers['content-encoding']
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return new UnsupportedMediaTypeError(`the body must not be encoded, but its Content-Encoding is ${JSON.stringify(encoding)}`)
  }
  return undefined
}
