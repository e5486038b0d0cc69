import type { LogDestination } from './log-destination.js'

// Log lines for a person at a terminal: `14:03:07.412 INFO  POST /plants 200 1.3 ms …` instead
// of pino's JSON. Only LOG_FORMAT=pretty, or a standard output that is a terminal, takes this
// path: it parses every line again, a cost a log collector's JSON does not pay.
export function prettyLogDestination (destination: LogDestination, { colors }: { colors: boolean }): LogDestination {
  return {
    write: (line) => destination.write(prettyLogLine(line, colors)),
    flush: () => destination.flush(),
  }
}

const levelNames: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }
// Red for errors, yellow for warnings, dim for debugging.
const levelColors: Readonly<Record<number, string>> = { 10: '2', 20: '2', 30: '32', 40: '33', 50: '31', 60: '31' }
// Said by the line's own layout (time, level, message, request) or the same on every line.
const shownElsewhere = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'req', 'res', 'responseTime', 'err'])

export function prettyLogLine (line: string, colors: boolean): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(line) as Record<string, unknown>
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`
  }
  const level = typeof entry.level === 'number' ? entry.level : 30
  const levelName = (levelNames[level] ?? String(level)).padEnd(5)
  const parts = [
    clockTime(entry.time),
    colors ? `\u001b[${levelColors[level] ?? '0'}m${levelName}\u001b[0m` : levelName,
    ...describeRequest(entry),
    String(entry.msg ?? ''),
  ]
  for (const [key, value] of Object.entries(entry)) {
    if (!shownElsewhere.has(key) && value !== undefined) parts.push(`${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
  }
  return `${parts.filter((part) => part !== '').join(' ')}\n${describeError(entry.err)}`
}

// An access line reads as the request it answered: method, path, status, time, and who sent it.
function describeRequest (entry: Record<string, unknown>): string[] {
  const request = entry.req as { method?: string, url?: string, identity?: string } | undefined
  const response = entry.res as { statusCode?: number } | undefined
  if (request === undefined) return []
  return [
    `${request.method ?? ''} ${request.url ?? ''}`,
    response?.statusCode === undefined ? '' : String(response.statusCode),
    typeof entry.responseTime === 'number' ? `${entry.responseTime.toFixed(1)} ms` : '',
    request.identity === undefined ? '' : `by ${request.identity}`,
  ]
}

// The error's stack, indented under its line, as Node prints it.
function describeError (error: unknown): string {
  if (typeof error !== 'object' || error === null) return ''
  const { stack, message, type } = error as { stack?: string, message?: string, type?: string }
  const text = stack ?? `${type ?? 'Error'}: ${message ?? ''}`
  return `${text.split('\n').map((stackLine) => `    ${stackLine}`).join('\n')}\n`
}

function clockTime (time: unknown): string {
  if (typeof time !== 'number') return ''
  const date = new Date(time)
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0')
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
}
