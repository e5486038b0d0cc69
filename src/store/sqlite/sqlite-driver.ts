import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

// better-sqlite3 13 is built on Node-API, so one build serves every Node version from 22 on.
// On Node 20, better-sqlite3 12 is loaded instead (installed as better-sqlite3-node20 and
// compiled at install time). 12 must not run on Node 24: its ObjectWrap destructor aborts the
// process when the garbage collector frees a statement. Both have the same API and types.
// Every use of SQLite in this project, tests included, goes through this module.
const require = createRequire(import.meta.url)
const nodeMajorVersion = Number(process.versions.node.split('.')[0])

// Resolved once, so that a thread of its own (src/store/sqlite/background-connection.ts) loads the same build.
export const databaseModulePath = require.resolve(nodeMajorVersion >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20')

export const Database: typeof BetterSqlite3 = require(databaseModulePath)

export type Database = BetterSqlite3.Database

export const SqliteError = Database.SqliteError
