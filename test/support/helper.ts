import { join } from 'node:path'
import type { FastifyInstance, InjectOptions } from 'fastify'
import type { Response as InjectResponse } from 'light-my-request'
import type { Test } from 'tap'
import { type AppConfig, type AppDependencies, buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/config.js'
import { assertMatchesSpec } from './contract.js'
import { testFolder } from './test-folder.js'

export const testToken = 'test-token-0123456789'
export const otherTestToken = 'other-token-9876543210'

export interface TestApp {
  readonly app: FastifyInstance
  readonly databaseFile: string
  // Sends a request with inject and checks the response against openapi.yaml.
  readonly send: (options: InjectOptions) => Promise<CheckedResponse>
  // POST /plants with a valid token; `body` is sent as is when it is a string.
  readonly createPlant: (body: unknown, headers?: Record<string, string>) => Promise<CheckedResponse>
}

export interface CheckedResponse {
  readonly response: InjectResponse
  readonly statusCode: number
  readonly headers: InjectResponse['headers']
  // The parsed JSON body, or the text of any other body.
  readonly body: unknown
}

// Half a minute into a window, whatever its length in whole minutes.
const stillRateLimitClock = Date.UTC(2026, 0, 1, 0, 0, 30)

// The one way tests build the app: an explicit config, a fresh SQLite file in the test's own
// folder, and the app closed when the test ends.
export async function buildTestApp (
  t: Test,
  overrides: Partial<AppConfig> = {},
  dependencies: AppDependencies = {}
): Promise<TestApp> {
  const databaseFile = join(testFolder(t), 'plants.db')
  // Every setting at its documented default (the defaults of an empty environment, not this
  // process's), but for these.
  const { PORT: _port, HOST: _host, ...defaults } = loadConfig({})
  const config: AppConfig = {
    ...defaults,
    DATABASE_URL: `sqlite:${databaseFile}`,
    DATABASE_POOL_SIZE: 4,
    API_TOKENS: `${testToken},${otherTestToken}`,
    LOG_LEVEL: 'silent',
    // The tests send many bad credentials and requests from one address on purpose; the rate
    // limit tests set their own.
    RATE_LIMIT_PER_CREDENTIAL: 1_000_000,
    RATE_LIMIT_PER_ADDRESS: 1_000_000,
    RATE_LIMIT_FAILED_AUTH: 1_000_000,
    ...overrides,
  }
  // The rate limits count in windows that end on the clock's whole minutes: a test that fills a
  // limit and expects the next request refused would fail whenever a minute ended in between. Their
  // clock stands still unless a test brings its own (to roll a window on purpose).
  const app = await buildApp(config, {
    ...dependencies,
    rateLimitTuning: { now: () => stillRateLimitClock, ...dependencies.rateLimitTuning },
  })
  t.teardown(() => app.close())

  const send = async (options: InjectOptions): Promise<CheckedResponse> => {
    const response = await app.inject(options)
    const body = assertMatchesSpec(t, response, config.BASE_PATH)
    return { response, statusCode: response.statusCode, headers: response.headers, body }
  }
  const createPlant = async (body: unknown, headers: Record<string, string> = {}): Promise<CheckedResponse> =>
    send({
      method: 'POST',
      url: `${config.BASE_PATH}/plants`,
      headers: { authorization: `Bearer ${testToken}`, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    })
  return { app, databaseFile, send, createPlant }
}
