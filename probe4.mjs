import { buildApp } from './dist/src/app.js'
import { loadConfig } from './dist/src/config/config.js'
const { PORT, HOST, ...d } = loadConfig({})
const app = await buildApp({ ...d, DATABASE_URL: 'sqlite:/tmp/probe4.db', API_TOKENS: 'test-token-0123456789', LOG_LEVEL: 'silent' })
await app.ready()
const r = await app.inject({ method: 'DELETE', url: '/plants/1', headers: { authorization: 'Bearer test-token-0123456789', 'if-match': 'abc' } })
console.log(r.statusCode, r.body)
await app.close()
