import type { PlantStore } from './plant-store.js'
import { SqlitePlantStore } from './sqlite/sqlite-plant-store.js'

// DATABASE_URL picks the backend: `sqlite:<path>` is a SQLite file, relative to the working
// directory. The config schema has already refused any other form.
export function openPlantStore (databaseUrl: string): PlantStore {
  if (databaseUrl.startsWith('sqlite:')) {
    return new SqlitePlantStore({ filename: databaseUrl.slice('sqlite:'.length) })
  }
  throw new Error(`unsupported DATABASE_URL: ${databaseUrl}`)
}
