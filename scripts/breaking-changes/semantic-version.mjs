// MAJOR.MINOR.PATCH versions, as info.version holds them: read, compared and bumped.
const pattern = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/

export function parseVersion (text) {
  const match = pattern.exec(String(text))
  if (match === null) return undefined
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) }
}

export function compareVersions (a, b) {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch
}

export function bumpVersion ({ major, minor, patch }, part) {
  switch (part) {
    case 'major': return `${major + 1}.0.0`
    case 'minor': return `${major}.${minor + 1}.0`
    case 'patch': return `${major}.${minor}.${patch + 1}`
    default: throw new Error(`a release is major, minor or patch, not ${part}`)
  }
}
