import type { IncomingHttpHeaders } from 'node:http'
import { UnsupportedMediaTypeError } from '../errors/api-errors.js'

const charsetParameter = /;\s*charset\s*=\s*"?([^";\s]*)"?/gi
// The spellings nearly every client sends, accepted without parsing them.
const commonJsonContentTypes = new Set(['application/json', 'application/json; charset=utf-8'])

// Why a body sent with these headers would not be read (a 415), or undefined when it would:
// application/json, with charset=utf-8 or none, no content coding, and no transfer coding but chunked.
export function contentTypeRefusal (headers: IncomingHttpHeaders): UnsupportedMediaTypeError | undefined {
  const contentType = headers['content-type']
  const transferEncoding = headers['transfer-encoding']
  if (contentType !== undefined && commonJsonContentTypes.has(contentType) && headers['content-encoding'] === undefined &&
    (transferEncoding === undefined || transferEncoding === 'chunked')) {
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
  // Node takes the chunks apart and would hand on a gzip transfer coding's bytes as they are.
  if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
    return new UnsupportedMediaTypeError(`the body must be sent whole or chunked, but its Transfer-Encoding is ${JSON.stringify(transferEncoding)}`)
  }
  return undefined
}
