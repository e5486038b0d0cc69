import t from 'tap'
import { ConfigError, loadConfig, parseTokenList } from '../src/config/config.js'
import { tracesEndpointOf } from '../src/observability/observability.js'

t.test('an empty environment gives the documented defaults', async (t) => {
  t.same(loadConfig({}), {
    PORT: 3000,
    HOST: '127.0.0.1',
    DATABASE_URL: 'sqlite:./data/plants.db',
    DATABASE_POOL_SIZE: 10,
    DATABASE_FAILOVER_WAIT: 5,
    API_TOKENS: '',
    TOKEN_CACHE_TTL: 5,
    JWT_ISSUER: '',
    JWT_AUDIENCE: '',
    JWT_JWKS_URL: '',
    JWT_JWKS_FILE: '',
    JWT_JWKS_TIMEOUT: 5000,
    JWT_CLOCK_TOLERANCE: 30,
    JWT_ALGORITHMS: 'RS256,ES256,EdDSA',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'auto',
    BASE_PATH: '',
    BODY_LIMIT: 16_384,
    REQUEST_TIMEOUT: 30_000,
    MAX_CONNECTIONS: 10_000,
    MAX_UNANSWERED_REQUESTS: 16,
    RATE_LIMIT_WINDOW: 60,
    RATE_LIMIT_PER_CREDENTIAL: 60_000,
    RATE_LIMIT_PER_ADDRESS: 6000,
    RATE_LIMIT_FAILED_AUTH: 30,
    WEBHOOK_RETRY_SCHEDULE: '0,5,300,1800,7200,18000,36000,50400,72000,86400',
    WEBHOOK_ALLOW_LOOPBACK: 'false',
    WEBHOOK_DELIVERIES: 'on',
    WEBHOOK_TIMEOUT: 15,
    WEBHOOK_DISABLE_AFTER: 432_000,
    METRICS: 'on',
    METRICS_TOKEN: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
    OTEL_SERVICE_NAME: 'plant-store',
  })
})

t.test('settings are read from their variables and converted to their types', async (t) => {
  const config = loadConfig({
    PORT: '8080',
    HOST: '0.0.0.0',
    DATABASE_URL: 'sqlite:/var/lib/plants.db',
    DATABASE_POOL_SIZE: '20',
    DATABASE_FAILOVER_WAIT: '2.5',
    API_TOKENS: 'a,b',
    TOKEN_CACHE_TTL: '0',
    JWT_ISSUER: 'https://id.example.com/',
    JWT_AUDIENCE: 'plant-store',
    JWT_JWKS_URL: 'https://id.example.com/jwks.json',
    JWT_JWKS_TIMEOUT: '2000',
    JWT_CLOCK_TOLERANCE: '10',
    JWT_ALGORITHMS: 'ES256, EdDSA',
    LOG_LEVEL: 'debug',
    LOG_FORMAT: 'pretty',
    BASE_PATH: '/api/v1',
    BODY_LIMIT: '1024',
    REQUEST_TIMEOUT: '5000',
    MAX_CONNECTIONS: '500',
    MAX_UNANSWERED_REQUESTS: '4',
    RATE_LIMIT_WINDOW: '10',
    RATE_LIMIT_PER_CREDENTIAL: '1000',
    RATE_LIMIT_PER_ADDRESS: '100',
    RATE_LIMIT_FAILED_AUTH: '5',
    WEBHOOK_RETRY_SCHEDULE: '0,1,2.5',
    WEBHOOK_ALLOW_LOOPBACK: 'only',
    WEBHOOK_DELIVERIES: 'off',
    WEBHOOK_TIMEOUT: '2.5',
    WEBHOOK_DISABLE_AFTER: '60',
    METRICS: 'off',
    METRICS_TOKEN: 'scrape-token',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/v1/traces',
    OTEL_SERVICE_NAME: 'plants-eu-1',
    UNRELATED: 'ignored',
  })
  t.same(config, {
    PORT: 8080,
    HOST: '0.0.0.0',
    DATABASE_URL: 'sqlite:/var/lib/plants.db',
    DATABASE_POOL_SIZE: 20,
    DATABASE_FAILOVER_WAIT: 2.5,
    API_TOKENS: 'a,b',
    TOKEN_CACHE_TTL: 0,
    JWT_ISSUER: 'https://id.example.com/',
    JWT_AUDIENCE: 'plant-store',
    JWT_JWKS_URL: 'https://id.example.com/jwks.json',
    JWT_JWKS_FILE: '',
    JWT_JWKS_TIMEOUT: 2000,
    JWT_CLOCK_TOLERANCE: 10,
    JWT_ALGORITHMS: 'ES256, EdDSA',
    LOG_LEVEL: 'debug',
    LOG_FORMAT: 'pretty',
    BASE_PATH: '/api/v1',
    BODY_LIMIT: 1024,
    REQUEST_TIMEOUT: 5000,
    MAX_CONNECTIONS: 500,
    MAX_UNANSWERED_REQUESTS: 4,
    RATE_LIMIT_WINDOW: 10,
    RATE_LIMIT_PER_CREDENTIAL: 1000,
    RATE_LIMIT_PER_ADDRESS: 100,
    RATE_LIMIT_FAILED_AUTH: 5,
    WEBHOOK_RETRY_SCHEDULE: '0,1,2.5',
    WEBHOOK_ALLOW_LOOPBACK: 'only',
    WEBHOOK_DELIVERIES: 'off',
    WEBHOOK_TIMEOUT: 2.5,
    WEBHOOK_DISABLE_AFTER: 60,
    METRICS: 'off',
    METRICS_TOKEN: 'scrape-token',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/v1/traces',
    OTEL_SERVICE_NAME: 'plants-eu-1',
  })
})

t.test('a retry schedule is comma-separated seconds', async (t) => {
  for (const schedule of ['5,', ',5', '5;10', '-1', 'soon', '0,2592000.5', '99999999999999999999']) {
    t.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: schedule }), ConfigError, JSON.stringify(schedule))
  }
  t.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0,99999999999999999999' }), {
    message: /WEBHOOK_RETRY_SCHEDULE="0,99999999999999999999" is not valid: each wait must be at most 2592000 seconds \(30 days\), not 99999999999999999999/,
  })
  t.equal(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0,2592000' }).WEBHOOK_RETRY_SCHEDULE, '0,2592000', 'thirty days is the longest wait')
  t.throws(() => loadConfig({ WEBHOOK_TIMEOUT: '0' }), ConfigError, 'a timeout above 0')
})

t.test('METRICS_TOKEN is never repeated in a refusal', async (t) => {
  t.throws(() => loadConfig({ METRICS_TOKEN: 'not a token;' }), { message: /METRICS_TOKEN=\(not shown\) is not valid/ })
})

t.test('the traces endpoint follows the OpenTelemetry variables', async (t) => {
  const endpointOf = (environment: Record<string, string>): string | undefined => tracesEndpointOf(loadConfig(environment))
  t.equal(endpointOf({}), undefined, 'no endpoint, no traces')
  t.equal(endpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), 'http://collector:4318/v1/traces')
  t.equal(endpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp/' }), 'http://collector:4318/otlp/v1/traces')
  t.equal(endpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces' }), 'http://b:4318/traces')
  t.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), ConfigError, 'a URL with its scheme')
})

t.test('DATABASE_URL takes a SQLite file or a PostgreSQL URL', async (t) => {
  for (const url of [
    'sqlite:plants.db', 'postgres://plants@db.internal:5432/plants', 'postgresql://plants:secret@127.0.0.1/plants?sslmode=require',
  ]) {
    t.equal(loadConfig({ DATABASE_URL: url }).DATABASE_URL, url)
  }
})

t.test('an empty variable takes the default', async (t) => {
  t.equal(loadConfig({ PORT: '' }).PORT, 3000)
})

const badValues: Array<[string, string]> = [
  ['PORT', 'abc'], ['PORT', '70000'], ['PORT', '3000.5'], ['DATABASE_URL', 'mysql://localhost/plants'],
  ['DATABASE_URL', 'sqlite:'], ['DATABASE_URL', 'postgres:plants'],
  ['DATABASE_POOL_SIZE', '0'], ['DATABASE_POOL_SIZE', 'many'], ['DATABASE_FAILOVER_WAIT', '-1'], ['DATABASE_FAILOVER_WAIT', '61'], ['LOG_LEVEL', 'loud'], ['BASE_PATH', 'api'], ['BASE_PATH', '/api/'],
  ['BODY_LIMIT', '10'], ['BODY_LIMIT', 'lots'], ['REQUEST_TIMEOUT', '0'], ['MAX_CONNECTIONS', '0'], ['MAX_UNANSWERED_REQUESTS', '1001'], ['RATE_LIMIT_WINDOW', '0'],
  ['RATE_LIMIT_FAILED_AUTH', 'few'], ['API_TOKENS', 'a token with spaces;'],
]
for (const [name, value] of badValues) {
  t.test(`${name}=${value} stops start-up with a message naming ${name}`, async (t) => {
    t.throws(() => loadConfig({ [name]: value }), ConfigError)
    try {
      loadConfig({ [name]: value })
    } catch (error) {
      t.match((error as ConfigError).message, new RegExp(`${name}=.*is not valid: expected`))
      t.equal((error as ConfigError).problems.length, 1, 'only the bad variable is reported')
    }
  })
}

t.test('every bad variable is reported at once', async (t) => {
  try {
    loadConfig({ PORT: 'x', LOG_LEVEL: 'y' })
    t.fail('expected a ConfigError')
  } catch (error) {
    t.match((error as ConfigError).problems, [/^PORT=/, /^LOG_LEVEL=/])
  }
})

t.test('the token list is split on commas and trimmed', async (t) => {
  t.same(parseTokenList(' one, two ,,three '), ['one', 'two', 'three'])
  t.same(parseTokenList(''), [])
})

t.test('API_TOKENS refuses a token that could never be sent as a bearer token', async (t) => {
  for (const tokens of ['ab=cd', 'abc def', '===', 'good-token,bad token']) {
    t.throws(() => loadConfig({ API_TOKENS: tokens }), ConfigError, tokens)
  }
  t.equal(loadConfig({ API_TOKENS: ' one-token , two+/token== ,, ' }).API_TOKENS, ' one-token , two+/token== ,, ')
})

t.test('a refused setting does not repeat tokens or a database password', async (t) => {
  t.throws(() => loadConfig({ API_TOKENS: 'secret-one,not a token' }), { message: /API_TOKENS=\(not shown\) is not valid/ })
  const urls: ReadonlyArray<[string, string]> = [
    ['mysql://plants:hunter2@db/plants', 'mysql://plants:***@db/plants'],
    ['mysql://plants:hunter2@hunter2@db/plants', 'mysql://plants:***@db/plants'],
    ['mysql://db/plants?password=hunter2', 'mysql://db/plants?password=***'],
    ['hunter2 is not a URL', '(not shown: not a URL)'],
  ]
  for (const [url, shown] of urls) {
    t.throws(() => loadConfig({ DATABASE_URL: url }), { message: `DATABASE_URL=${JSON.stringify(shown)} is not valid` }, url)
    t.throws(() => loadConfig({ DATABASE_URL: url }), { message: /^(?![\s\S]*hunter2)/ }, `${url}: no password`)
  }
})

t.test('a JWT configuration is whole or absent, and never admits none or an HMAC algorithm', async (t) => {
  const jwt = { JWT_ISSUER: 'https://id.example.com/', JWT_AUDIENCE: 'plant-store', JWT_JWKS_FILE: './jwks.json' }
  t.equal(loadConfig(jwt).JWT_ISSUER, 'https://id.example.com/', 'issuer, audience and one key source: accepted')
  const refusals: Array<[Record<string, string>, RegExp]> = [
    [{ ...jwt, JWT_AUDIENCE: '' }, /JWT_ISSUER and JWT_AUDIENCE must both be set/],
    [{ JWT_JWKS_URL: 'https://id.example.com/jwks.json' }, /JWT_ISSUER and JWT_AUDIENCE must both be set/],
    [{ ...jwt, JWT_JWKS_FILE: '' }, /exactly one of JWT_JWKS_URL and JWT_JWKS_FILE/],
    [{ ...jwt, JWT_JWKS_URL: 'https://id.example.com/jwks.json' }, /exactly one of JWT_JWKS_URL and JWT_JWKS_FILE/],
    [{ ...jwt, JWT_ALGORITHMS: 'HS256' }, /JWT_ALGORITHMS="HS256" is not valid/],
    [{ ...jwt, JWT_ALGORITHMS: 'RS256,none' }, /JWT_ALGORITHMS="RS256,none" is not valid/],
    [{ ...jwt, JWT_JWKS_FILE: '', JWT_JWKS_URL: 'http://id.example.com/jwks.json' }, /JWT_JWKS_URL must be an https:\/\/ URL/],
    [{ ...jwt, JWT_JWKS_FILE: '', JWT_JWKS_URL: 'http://127.0.0.1:80@evil.example/jwks' }, /JWT_JWKS_URL must be an https:\/\/ URL/],
    [{ ...jwt, JWT_JWKS_FILE: '', JWT_JWKS_URL: 'http://localhost:1@evil.example/' }, /JWT_JWKS_URL must be an https:\/\/ URL/],
    [{ ...jwt, JWT_JWKS_FILE: '', JWT_JWKS_URL: 'http://127.0.0.1.evil.example/jwks' }, /JWT_JWKS_URL must be an https:\/\/ URL/],
    [{ ...jwt, JWT_JWKS_FILE: '', JWT_JWKS_URL: 'ftp://id.example.com/jwks' }, /JWT_JWKS_URL=.* is not valid/],
  ]
  for (const [environment, message] of refusals) {
    t.throws(() => loadConfig(environment), { name: 'ConfigError', message }, JSON.stringify(environment))
  }
  t.equal(loadConfig({ ...jwt, JWT_JWKS_FILE: '', JWT_JWKS_URL: 'http://127.0.0.1:8080/jwks.json' }).JWT_JWKS_URL,
    'http://127.0.0.1:8080/jwks.json', 'plain http on the loopback address: accepted')
  t.equal(loadConfig({ ...jwt, JWT_JWKS_FILE: '', JWT_JWKS_URL: 'http://[::1]:8080/jwks.json' }).JWT_JWKS_URL, 'http://[::1]:8080/jwks.json')
})
