// Where the OpenAPI document an instance serves differs from the local openapi.yaml, each
// difference named by its JSON pointer, with both values. The documents are compared as data, not
// as text: a comment or a quoting style is no difference to a client, a changed limit is.
import { parse } from 'yaml'

// At most this many differences are named; a wholly different document would fill the screen.
const namedAtMost = 10

// [] when they are the same document.
export function servedSpecDifferences (servedText, localText) {
  let served
  try {
    served = parse(servedText)
  } catch (error) {
    return [`the served document is not YAML: ${error.message.split('\n')[0]}`]
  }
  const differences = []
  compare(served, parse(localText), '', differences)
  const named = differences.slice(0, namedAtMost)
  if (differences.length > namedAtMost) named.push(`… and ${differences.length - namedAtMost} more`)
  return named
}

function compare (served, local, pointer, differences) {
  if (isContainer(served) && isContainer(local) && Array.isArray(served) === Array.isArray(local)) {
    const keys = new Set([...Object.keys(local), ...Object.keys(served)])
    for (const key of keys) compare(served[key], local[key], `${pointer}/${escape(key)}`, differences)
    return
  }
  if (JSON.stringify(served) === JSON.stringify(local)) return
  differences.push(`${pointer === '' ? '/' : pointer}: served ${describe(served)}, local ${describe(local)}`)
}

function isContainer (value) {
  return typeof value === 'object' && value !== null
}

// RFC 6901: `~` and `/` in a key are written `~0` and `~1`.
function escape (key) {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}

// A value short enough for one line of the summary.
function describe (value) {
  if (value === undefined) return 'nothing'
  const text = JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
