// A plant as every backend keeps it: its id, a bigint because ids are int64 (a JavaScript number
// would merge ids that differ only above 2^53), and its document: the canonical JSON text
// (src/json/canonical-json.ts) of the properties openapi.yaml declares for a Plant. The store
// never looks inside the document, so a property added to the spec is stored with no change here.
export interface PlantRow {
  readonly id: bigint
  readonly document: string
}

// The stored plant as the JSON a StoredPlant is: its id first (exact: its digits as they are),
// then the members of its document.
export function plantWithId ({ id, document }: PlantRow): string {
  return document === '{}' ? `{"id":${id}}` : `{"id":${id},${document.slice(1)}`
}
