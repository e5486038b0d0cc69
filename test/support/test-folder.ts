import { mkdtempSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'

// A folder of the test's own, removed after every teardown registered later has run: a test's
// teardowns run last-registered first, and a store or an app opened in the folder registers its
// close after the folder exists. tap's own t.testdir() removes its folder before the test's
// teardowns run: a SQLite store still open then could recreate its file while the folder is being
// removed (its background connection's thread, when slow to start, opens the file after the
// removal began), and the removal failed with ENOTEMPTY.
export function testFolder (t: Test): string {
  const folder = mkdtempSync(join(tmpdir(), 'plant-store-test-'))
  t.teardown(() => rm(folder, { recursive: true, force: true }))
  return folder
}
