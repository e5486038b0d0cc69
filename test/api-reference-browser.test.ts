import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import t, { type Test } from 'tap'
import { buildTestApp, testToken } from './support/helper.js'
import { readStoredPlants } from './support/stored-plants.js'

// A person's use of GET /docs, in Debian's Chromium driven by playwright-core (nothing is
// downloaded): open the service's root, land on the page, paste a token, send a create, see the 200.
// Screenshots of the answered request and of the error table are kept in test-artifacts/ (CI
// keeps that folder).

const chromiumPath = '/usr/bin/chromium'
// CI installs Chromium and never skips; elsewhere a missing browser skips with the reason.
const skip = process.env.CI !== 'true' && !existsSync(chromiumPath)
  ? `${chromiumPath} is not installed (apt-get install chromium) — .ci/run installs it`
  : false
const artifacts = join(import.meta.dirname, '..', 'test-artifacts')

// The flags a closed network needs: without them Chromium keeps trying to reach Google's hosts.
const chromiumFlags = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
]

async function createPlantThroughTheDocs (t: Test, basePath: string, screenshotName: string): Promise<void> {
  const { app, databaseFile } = await buildTestApp(t, { BASE_PATH: basePath })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo

  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumFlags })
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } }).catch(async (error: unknown) => {
    await browser.close()
    throw error
  })
  // Whatever happens, the page as it ended is kept, then the browser closed: a failed run's
  // screenshot says most.
  t.teardown(async () => {
    try {
      mkdirSync(artifacts, { recursive: true })
      await page.screenshot({ path: join(artifacts, `${screenshotName}-node${process.versions.node}.png`), fullPage: true })
    } finally {
      await browser.close()
    }
  })
  const problems: string[] = []
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
  page.on('pageerror', (error) => problems.push(String(error)))
  const requestsElsewhere: string[] = []
  page.on('request', (request) => {
    if (!request.url().startsWith(`http://127.0.0.1:${port}/`) && !request.url().startsWith('data:')) requestsElsewhere.push(request.url())
  })

  const service = `http://127.0.0.1:${port}${basePath}`
  await page.goto(`${service}/`)
  await page.locator('.swagger-ui .info .title', { hasText: 'Plant Store' }).waitFor()
  t.equal(page.url(), `${service}/docs`, 'the service\'s root opens the reference')

  const servers = page.locator('.scheme-container .servers select option')
  t.same(await Promise.all((await servers.all()).map(async (option) => option.getAttribute('value'))), [service],
    'the one server offered is the service the page was loaded from')
  t.match(await servers.first().textContent(), /This service/)
  t.equal(await page.locator('#operations-operations-getApiReference').count(), 1, 'GET /docs is listed')
  t.equal(await page.locator('#operations-operations-getApiReferenceAsset').count(), 0, 'GET /docs/{asset} is not')
  t.notMatch(await page.locator('.swagger-ui').textContent(), '/docs/{asset}')

  const errorTable = page.locator('.swagger-ui .info table').first()
  mkdirSync(artifacts, { recursive: true })
  await errorTable.screenshot({ path: join(artifacts, `${screenshotName}-error-table-node${process.versions.node}.png`) })
  const headerGaps = await errorTable.locator('thead th').evaluateAll((cells) => {
    const textBoxes = cells.map((cell) => {
      const range = cell.ownerDocument.createRange()
      range.selectNodeContents(cell)
      return range.getBoundingClientRect()
    })
    return textBoxes.slice(1).map((box, index) => box.left - (textBoxes[index]?.right ?? 0))
  })
  t.equal(headerGaps.length, 2, 'the error table has three header cells')
  t.ok(headerGaps.every((gap) => gap >= 12), `its header cells' words stand apart (gaps of ${headerGaps.map(Math.round).join(', ')} px)`)

  await page.locator('.scheme-container button.authorize').click()
  // The dialog has a form per security scheme; the plant operations ask for bearerAuth.
  const bearerAuth = page.locator('.modal-ux form', { hasText: 'bearerAuth (http, Bearer)' })
  await bearerAuth.locator('input').fill(testToken)
  await bearerAuth.locator('.auth-btn-wrapper button.authorize').click()
  await bearerAuth.locator('button.btn-done').click()

  const operation = page.locator('#operations-plants-createPlant')
  await operation.locator('.opblock-summary').click()
  await operation.locator('.try-out__btn').click()
  await operation.locator('textarea.body-param__text').fill('{"id": 9007199254740993, "name": "Calathea", "tag": "prayer"}')
  await operation.locator('button.execute').click()

  const answer = operation.locator('.live-responses-table .response')
  await answer.waitFor()
  t.equal((await answer.locator('.response-col_status').textContent())?.trim(), '200')
  t.same(JSON.parse(await answer.locator('.response-col_description pre').first().textContent() ?? ''), { name: 'Calathea', tag: 'prayer' })
  t.same(readStoredPlants(databaseFile), [{ id: 9007199254740993n, name: 'Calathea', tag: 'prayer' }],
    'stored, with the id exact')
  t.same(problems, [], 'no errors in the page (a refused script or style would show here)')
  t.same(requestsElsewhere, [], 'the page loads nothing from anywhere else')
}

t.test('in a browser, a person pastes a token into /docs and creates a plant', { skip }, async (t) => {
  await createPlantThroughTheDocs(t, '', 'api-reference-create-plant')
})

t.test('the same under a BASE_PATH', { skip }, async (t) => {
  await createPlantThroughTheDocs(t, '/api/v1', 'api-reference-create-plant-base-path')
})
