import { Type } from '@sinclair/typebox'
import { token68Source } from './token68.js'

// Asymmetric algorithms only: with an HMAC algorithm allowed, a token signed with the
// identity provider's public key as an HMAC secret would verify.
export const asymmetricJwtAlgorithms = [
  'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
] as const
const jwtAlgorithmsSource = asymmetricJwtAlgorithms.join('|')

// Every setting, described once. The README's configuration table follows this schema, and
// loadConfig refuses a bad value with the variable's name and what it accepts.
// The longest wait a webhook retry schedule may hold (WEBHOOK_RETRY_SCHEDULE, and a receiver's
// Retry-After): 30 days, beyond any schedule a receiver would want. An attempt's time is stored as
// whole milliseconds in a 64-bit integer; a wait of 10^20 seconds made every create owing a
// message fail instead of start-up being refused.
export const longestRetryWaitSeconds = 30 * 24 * 60 * 60

export const ConfigSchema = Type.Object({
  PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 3000,
    description: 'an integer from 0 to 65535',
  }),
  HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'a host name or IP address to listen on',
  }),
  DATABASE_URL: Type.String({
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    default: 'sqlite:./data/plants.db',
    description: '"sqlite:<path>" (the file and its folder are created on first start) or "postgres://user@host:port/database"',
  }),
  DATABASE_POOL_SIZE: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 10,
    description: 'the most connections one instance opens to PostgreSQL, an integer from 1 to 1000',
  }),
  DATABASE_FAILOVER_WAIT: Type.Number({
    minimum: 0,
    maximum: 60,
    default: 5,
    description: 'PostgreSQL only: how many seconds, from 0 to 60, a request that reaches no primary (no connection opens, or the server is a standby) waits for one before its 503; a planned switchover takes about 4',
  }),
  API_TOKENS: Type.String({
    pattern: `^\\s*(${token68Source})?\\s*(,\\s*(${token68Source})?\\s*)*$`,
    default: '',
    description: 'a comma-separated list of bearer tokens, each of A-Z a-z 0-9 - . _ ~ + / and then any "=" padding',
  }),
  TOKEN_CACHE_TTL: Type.Integer({
    minimum: 0,
    maximum: 3600,
    default: 5,
    description: 'how many seconds an instance trusts what it last read of a managed token, from 0 to 3600: a revocation takes effect on every instance within this time',
  }),
  JWT_ISSUER: Type.String({
    default: '',
    description: "empty (no JWTs), or the issuer (`iss`) a JWT must name: the identity provider's issuer URL",
  }),
  JWT_AUDIENCE: Type.String({
    default: '',
    description: 'empty (no JWTs), or the audience (`aud`) a JWT must name: the identifier the identity provider gives this service',
  }),
  JWT_JWKS_URL: Type.String({
    pattern: '^(https?://.+)?$',
    default: '',
    description: "empty, or the https:// URL of the identity provider's JWKS (http:// only on the loopback address)",
  }),
  JWT_JWKS_FILE: Type.String({
    default: '',
    description: 'empty, or the path of a local JWKS file (a JSON Web Key Set), read at start-up',
  }),
  JWT_JWKS_TIMEOUT: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 5000,
    description: 'how long in milliseconds a fetch of JWT_JWKS_URL may take before JWT callers get a 503, from 100 to 60000',
  }),
  JWT_CLOCK_TOLERANCE: Type.Integer({
    minimum: 0,
    maximum: 600,
    default: 30,
    description: 'the clock skew in seconds allowed when checking a JWT\'s exp and nbf, from 0 to 600',
  }),
  JWT_ALGORITHMS: Type.String({
    pattern: `^\\s*(${jwtAlgorithmsSource})(\\s*,\\s*(${jwtAlgorithmsSource}))*\\s*$`,
    default: 'RS256,ES256,EdDSA',
    description: `a comma-separated list of the JWT signature algorithms accepted, of ${asymmetricJwtAlgorithms.join(', ')} (never none, nor an HMAC algorithm)`,
  }),
  LOG_LEVEL: Type.Union([
    Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'),
    Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent'),
  ], { default: 'info', description: 'one of fatal, error, warn, info, debug, trace, silent' }),
  // JSON lines are what log collectors read; a person at a terminal reads lines of text.
  LOG_FORMAT: Type.Union([Type.Literal('auto'), Type.Literal('json'), Type.Literal('pretty')], {
    default: 'auto',
    description: 'json, pretty (readable lines), or auto: pretty when standard output is a terminal, JSON otherwise',
  }),
  BASE_PATH: Type.String({
    pattern: '^(/[A-Za-z0-9._~-]+)*$',
    default: '',
    description: 'empty, or a path prefix such as /api/v1 (no trailing slash)',
  }),
  REQUEST_TIMEOUT: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 30_000,
    description: 'the time in milliseconds a request may take to arrive in full (and a connection on which nothing moves for twice as long is closed), from 100 to 600000',
  }),
  BODY_LIMIT: Type.Integer({
    minimum: 64,
    maximum: 10_485_760,
    default: 16_384,
    description: 'the largest accepted request body in bytes, an integer from 64 to 10485760',
  }),
  MAX_CONNECTIONS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 10_000,
    description: 'the most client connections open at once, from 1 to 1000000; more are refused',
  }),
  MAX_UNANSWERED_REQUESTS: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 16,
    description: 'the most requests of one connection handled at once (pipelining), from 1 to 1000; past it the connection is read no further until answers are written',
  }),
  RATE_LIMIT_WINDOW: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 60,
    description: 'the length in seconds of the window the rate limits count in, from 1 to 86400',
  }),
  RATE_LIMIT_PER_CREDENTIAL: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 60_000,
    description: 'the most requests to protected operations one credential may make in a window, from 1 to 1000000000',
  }),
  RATE_LIMIT_PER_ADDRESS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 6000,
    description: 'the most requests to public operations (but /healthz and /readyz) one client address may make in a window, from 1 to 1000000000',
  }),
  RATE_LIMIT_FAILED_AUTH: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 30,
    description: 'the most failed authentications one client address may have in a window before its requests to protected operations are refused until the window ends, from 1 to 1000000000',
  }),
  WEBHOOK_RETRY_SCHEDULE: Type.String({
    pattern: '^\\d+(\\.\\d+)?(,\\d+(\\.\\d+)?)*$',
    default: '0,5,300,1800,7200,18000,36000,50400,72000,86400',
    description: `the waits, in seconds (each at most ${longestRetryWaitSeconds}, 30 days), before each attempt to deliver a webhook message, comma-separated: the first before the first attempt, each other after the attempt before it failed (Standard Webhooks' schedule by default; shorter ones are for tests)`,
  }),
  WEBHOOK_ALLOW_LOOPBACK: Type.Union([Type.Literal('false'), Type.Literal('true'), Type.Literal('only')], {
    default: 'false',
    description: 'false; true to allow webhook endpoints on the loopback address and localhost too (http://127.0.0.1:<port>, http://[::1]:<port>, http://localhost:<port>) for development; or only, to allow loopback address literals and nothing else and resolve no host name (tests that must never reach beyond this machine)',
  }),
  WEBHOOK_DELIVERIES: Type.Union([Type.Literal('on'), Type.Literal('off')], {
    default: 'on',
    description: 'on; or off, so that this instance records the webhooks its writes owe and sends none, leaving them to an instance with on (an instance that only answers requests, or fuzzing, whose made-up endpoints must never be sent to)',
  }),
  WEBHOOK_TIMEOUT: Type.Number({
    exclusiveMinimum: 0,
    maximum: 60,
    default: 15,
    description: 'how many seconds an attempt to deliver a webhook may take before it counts as failed, above 0 and up to 60',
  }),
  WEBHOOK_DISABLE_AFTER: Type.Number({
    exclusiveMinimum: 0,
    default: 432000,
    description: 'how many seconds a webhook endpoint may fail every attempt before it is disabled (5 days by default)',
  }),
  METRICS: Type.Union([Type.Literal('on'), Type.Literal('off')], {
    default: 'on',
    description: 'on (GET /metrics serves the Prometheus metrics) or off (GET /metrics answers 404, and nothing is measured)',
  }),
  METRICS_TOKEN: Type.String({
    pattern: `^(${token68Source})?$`,
    default: '',
    description: 'empty (GET /metrics needs no credentials), or the bearer token GET /metrics requires, of A-Z a-z 0-9 - . _ ~ + / and then any "=" padding',
  }),
  // The names and meanings of the OpenTelemetry SDK's own variables, so that a collector set up
  // for other services is pointed at this one the same way.
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.String({
    pattern: '^(https?://.+)?$',
    default: '',
    description: 'empty (no traces, unless OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set), or the http(s):// base URL of an OTLP/HTTP collector; traces go to its /v1/traces',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.String({
    pattern: '^(https?://.+)?$',
    default: '',
    description: 'empty, or the full http(s):// URL traces are sent to (OTLP/HTTP, JSON), used as it is; it wins over OTEL_EXPORTER_OTLP_ENDPOINT',
  }),
  OTEL_SERVICE_NAME: Type.String({
    minLength: 1,
    default: 'plant-store',
    description: 'the service.name the traces carry',
  }),
})
