import { readFile } from 'node:fs/promises'
import { createLocalJWKSet, type JSONWebKeySet, type LocalJWKSet } from 'jose'
import { ConfigError } from '../../config/config.js'

// JWT_JWKS_FILE is read once, at start-up: a file that is missing or is not a set of public keys
// stops the service there, rather than refusing every JWT once it runs.
export async function readKeySetFile (path: string): Promise<LocalJWKSet> {
  const problem = (what: string) => new ConfigError([`JWT_JWKS_FILE=${JSON.stringify(path)} ${what}`])
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw problem(`could not be read (${error instanceof Error ? error.message : String(error)})`)
  }
  let keySet: unknown
  try {
    keySet = JSON.parse(text)
  } catch {
    throw problem('is not JSON')
  }
  if (!isKeySet(keySet)) throw problem('is not a JWKS: expected an object with a keys array of keys')
  // A private key here means the wrong file was named, and that it was copied where it should not be.
  if (keySet.keys.some((key) => 'd' in key)) throw problem('holds a private key: it must hold only the public keys')
  return createLocalJWKSet(keySet)
}

function isKeySet (value: unknown): value is JSONWebKeySet & { keys: Array<Record<string, unknown>> } {
  if (typeof value !== 'object' || value === null || !('keys' in value) || !Array.isArray(value.keys)) return false
  return value.keys.every((key) => typeof key === 'object' && key !== null && !Array.isArray(key))
}
