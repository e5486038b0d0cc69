import t from 'tap'
import { prettyLogLine } from '../../src/http/pretty-log-line.js'

// 2026-03-04T05:06:07.089 in the machine's time zone, as the pretty line shows it.
const time = new Date(2026, 2, 4, 5, 6, 7, 89).getTime()

t.test('an access line reads as its request: method, path, status, time, who; then the rest as key=value', async (t) => {
  const line = JSON.stringify({
    level: 30,
    time,
    pid: 1,
    hostname: 'h',
    reqId: 'r-1',
    req: { method: 'POST', url: '/plants', remoteAddress: '127.0.0.1', identity: 'default' },
    res: { statusCode: 409 },
    responseTime: 2.345,
    failure: { code: 40901, message: 'taken' },
    msg: 'request completed',
  })
  t.equal(prettyLogLine(`${line}\n`, false),
    '05:06:07.089 INFO  POST /plants 409 2.3 ms by default request completed reqId=r-1 failure={"code":40901,"message":"taken"}\n')
})

t.test('a line with an error shows its stack, indented under it; colours only when asked', async (t) => {
  const line = JSON.stringify({ level: 50, time, msg: 'request failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at here' } })
  t.equal(prettyLogLine(line, false), '05:06:07.089 ERROR request failed\n    Error: boom\n        at here\n')
  t.equal(prettyLogLine(line, true), '05:06:07.089 \u001b[31mERROR\u001b[0m request failed\n    Error: boom\n        at here\n')
})

t.test('a line that is not JSON is passed on as it is', async (t) => {
  t.equal(prettyLogLine('plain text', false), 'plain text\n')
  t.equal(prettyLogLine('plain text\n', false), 'plain text\n')
})
