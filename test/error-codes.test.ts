import t from 'tap'
import { ErrorCode, statusOf } from '../src/errors/api-errors.js'
import { loadOpenApiDocument } from '../src/openapi/openapi-document.js'

// openapi.yaml's description holds the one table of error codes; the code's list must say the
// same, code for code and status for status.

const { document } = loadOpenApiDocument()
const description = String((document.info as { description?: string }).description)
const tableRow = /^\| (\d{5}) \| (\d{3}) \| (.+) \|$/gm
const specTable = [...description.matchAll(tableRow)].map(([, code, status]) => ({ code: Number(code), status: Number(status) }))

t.test('every code the service answers with is in the spec table, and every code there is one it answers with', async (t) => {
  t.ok(specTable.length > 0, 'the table is found in the description')
  t.same(specTable.map(({ code }) => code).sort(), Object.values(ErrorCode).sort())
})

t.test('each code has the status the spec gives it, its first three digits', async (t) => {
  for (const { code, status } of specTable) {
    t.equal(status, Math.floor(code / 100), `${code} in the spec`)
    t.equal(statusOf(code as ErrorCode), status, `${code} in the code`)
  }
})

t.test('every status of the table is declared as a response of some operation, with the Error body', async (t) => {
  const declared = new Set<number>()
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem) as Array<{ responses?: Record<string, unknown> }>) {
      for (const status of Object.keys(operation.responses ?? {})) declared.add(Number(status))
    }
  }
  // 404 and 405 for undeclared paths and methods have no operation to declare them.
  for (const { code, status } of specTable) {
    if (status === 405) continue
    t.ok(declared.has(status), `${code}: status ${status} is declared`)
  }
})
