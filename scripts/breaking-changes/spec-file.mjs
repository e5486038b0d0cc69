// A spec read once as a YAML document, so that a comparison can work on plain values and a finding
// can still say at which line of the file it is. A place in the spec is named by its path of keys
// from the root (['paths', '/plants', 'get']), which both readings share.
import { readFileSync } from 'node:fs'
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml'

export function readSpecFile (file, text = readFileSync(file, 'utf8')) {
  const lineCounter = new LineCounter()
  const document = parseDocument(text, { lineCounter })
  if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0].message}`)
  const value = document.toJS({ maxAliasCount: -1 })
  const paths = pathsOfObjects(value)
  const lineAt = (offset) => lineCounter.linePos(offset).line
  return {
    file,
    text,
    value,
    version: String(value?.info?.version),
    // The path of an object of `value`, so that a schema reached through $refs is found where it is written.
    pathOf: (object) => paths.get(object),
    // The line of the deepest part of `path` that this spec has: a removed property is cited at
    // the object it was removed from, a removed operation at its path.
    lineOf: (path) => lineOfPath(document.contents, path, lineAt) ?? 1,
    has: (path) => path.length > 0 && document.hasIn(path),
    // The path of the key or list item that starts at `offset`: where Optic says a change is.
    pathAtOffset: (offset) => pathAtOffset(document.contents, offset, []),
  }
}

function pathsOfObjects (root) {
  const paths = new Map()
  const visit = (node, path) => {
    if (node === null || typeof node !== 'object' || paths.has(node)) return
    paths.set(node, path)
    for (const [key, child] of Object.entries(node)) visit(child, [...path, Array.isArray(node) ? Number(key) : key])
  }
  visit(root, [])
  return paths
}

function keyOf (pair) {
  return isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
}

function lineOfPath (node, path, lineAt) {
  let line
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => keyOf(item) === String(key))
      if (pair === undefined) break
      line = lineAt(pair.key.range[0])
      node = pair.value
    } else if (isSeq(node) && node.items[key] !== undefined) {
      node = node.items[key]
      line = lineAt(node.range[0])
    } else {
      break
    }
  }
  return line
}

function pathAtOffset (node, offset, path) {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = keyOf(pair)
      if (pair.key?.range?.[0] === offset) return [...path, key]
      const end = pair.value?.range?.[2] ?? pair.key?.range?.[2]
      if (pair.key?.range?.[0] < offset && offset < end) return pathAtOffset(pair.value, offset, [...path, key])
    }
  } else if (isSeq(node)) {
    for (const [index, item] of node.items.entries()) {
      if (item?.range?.[0] === offset) return [...path, index]
      if (item?.range?.[0] < offset && offset < item.range[2]) return pathAtOffset(item, offset, [...path, index])
    }
  }
  return path
}
