import { hash } from 'node:crypto'

// Entity tags (RFC 9110 §8.8.3), so that two editors of one plant cannot overwrite each other
// unseen: a plant's answer carries its tag, and a write sent with `If-Match: <that tag>` goes on
// only while the plant is still the one that was read (§13.1.1).
//
// The tag is strong, a hash of the stored document, which is the representation answered byte
// for byte: it changes exactly when the document does, every backend and every instance give one
// plant one tag, and nothing is stored for it. 144 bits of SHA-256, as base64url.
export function entityTagOf (document: string): string {
  return `"${hash('sha256', document, 'base64url').slice(0, 24)}"`
}

// One entity tag of a list, weak or strong: its opaque tag is whatever the quotes hold.
const listedTag = /\s*(W\/)?("[^"]*")\s*(?:,|$)/y
// A whole If-Match other than `*`: one or more entity tags, separated by commas.
const entityTagList = /^\s*(?:W\/)?"[^"]*"(?:\s*,\s*(?:W\/)?"[^"]*")*\s*$/

// Whether an If-Match header names entity tags at all, to tell a caller whose header names none
// why no plant matched it.
export function namesEntityTags (header: string | undefined): boolean {
  return header === undefined || header.trim() === '*' || entityTagList.test(header)
}

// What an If-Match header asks of the stored document, as a condition: undefined when it asks
// nothing (absent, or `*`, which any stored plant meets; a plant that is not stored is a 404
// first, §13.2.2). Otherwise the document must have one of the listed tags, compared strongly: a
// weak tag (W/"…") matches nothing, and a header that is not a list of entity tags names none, so
// no plant meets it (a 412, not a 400: openapi.yaml lets If-Match be any string, since any string
// an editor sends back must be answered as the precondition it is).
export function ifMatchCondition (header: string | undefined): ((storedDocument: string) => boolean) | undefined {
  if (header === undefined || header.trim() === '*') return undefined
  const strongTags = new Set<string>()
  if (!entityTagList.test(header)) return () => false
  listedTag.lastIndex = 0
  for (let match = listedTag.exec(header); match !== null && match[0] !== ''; match = listedTag.exec(header)) {
    if (match[1] === undefined) strongTags.add(match[2]!)
  }
  return (storedDocument) => strongTags.has(entityTagOf(storedDocument))
}
