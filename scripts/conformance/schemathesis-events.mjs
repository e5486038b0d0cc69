// What a Schemathesis run found, read from its NDJSON report (`--report ndjson`): the operations
// it sent cases to, how many cases, and each failure grouped by operation, check and title, with
// the first answer that showed it. The report holds every request and answer, so a failure can be
// told with the status and body that broke the contract rather than only the check's name.

// At most this many characters of a body or a message are shown: a failure takes two lines.
const bodyShownAtMost = 100
const messageShownAtMost = 160

export function summarizeEvents (ndjson) {
  const operations = new Set()
  const cases = new Set()
  const failingCases = new Set()
  const failures = new Map()
  const errors = []
  for (const line of ndjson.split('\n')) {
    if (line === '') continue
    const event = JSON.parse(line)
    if (event.ScenarioFinished !== undefined) {
      const { recorder, phase, status } = event.ScenarioFinished
      // A stateful scenario is labelled by the links it follows; its operations have their own.
      if (phase !== 'stateful' && status !== 'skip') operations.add(recorder.label)
      for (const caseId of Object.keys(recorder.cases ?? {})) cases.add(caseId)
      for (const [caseId, checks] of Object.entries(recorder.checks ?? {})) {
        for (const check of checks) {
          if (check.status !== 'failure') continue
          failingCases.add(caseId)
          const failure = check.failure_info?.failure ?? {}
          const operation = failure.operation ?? recorder.label
          const key = `${operation}\n${check.name}\n${failure.title}`
          const known = failures.get(key)
          if (known !== undefined) {
            known.cases.add(caseId)
            continue
          }
          failures.set(key, {
            operation,
            check: check.name,
            title: [failure.code, failure.title].filter((part) => part !== undefined).join(' '),
            message: oneLine(firstParagraph(failure.message ?? ''), messageShownAtMost),
            ...exchange(recorder.interactions?.[caseId]),
            cases: new Set([caseId]),
          })
        }
      }
    } else if (event.NonFatalError !== undefined) {
      const { label, info } = event.NonFatalError
      errors.push(`${label}: ${firstLine(info?.title ?? '')} ${firstLine(info?.message ?? JSON.stringify(info ?? {}))}`.trim())
    }
  }
  return {
    operations: [...operations].sort(),
    cases: cases.size,
    failingCases: failingCases.size,
    failures: [...failures.values()].map(({ cases, ...failure }) => ({ ...failure, count: cases.size })),
    errors,
  }
}

// The request as method and target, and the answer as its status and the start of its body.
function exchange (interaction) {
  if (interaction === undefined) return { request: undefined, status: undefined, body: undefined }
  const { request, response } = interaction
  const target = URL.canParse(request.uri) ? new URL(request.uri) : undefined
  return {
    request: `${request.method} ${target === undefined ? request.uri : target.pathname + target.search}`,
    status: response?.status_code,
    body: response === undefined ? undefined : oneLine(bodyText(response.content), bodyShownAtMost),
  }
}

function bodyText (content) {
  if (content === undefined || content === null) return ''
  if (typeof content === 'string') return content
  if (typeof content.$base64 === 'string') return Buffer.from(content.$base64, 'base64').toString('utf8')
  return JSON.stringify(content)
}

function oneLine (text, atMost) {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > atMost ? `${flat.slice(0, atMost - 3)}...` : flat
}

// The message's first paragraph: what follows (the whole schema, say) does not fit a summary.
function firstParagraph (text) {
  return text.trim().split(/\n\s*\n/)[0] ?? ''
}

function firstLine (text) {
  return text.split('\n').map((line) => line.trim()).find((line) => line !== '') ?? ''
}
