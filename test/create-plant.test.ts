import t from 'tap'
import { buildTestApp } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// What POST /plants does with a valid body, the same on every backend.

testOnEveryBackend(t, 'a valid NewPlant is stored and answered with the Plant body', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const created = await createPlant({ id: 7, name: 'Monstera', tag: 'aroid' })
  t.equal(created.statusCode, 200)
  t.same(created.body, { name: 'Monstera', tag: 'aroid' }, 'no id in the Plant body')
  t.match(created.headers['content-type'], /^application\/json/)
  t.same(await database.readStoredPlants(), [{ id: 7n, name: 'Monstera', tag: 'aroid' }])
})

testOnEveryBackend(t, 'a plant sent without a tag is answered without a tag key, never a null', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const created = await createPlant({ id: 8, name: 'Fern' })
  t.equal(created.statusCode, 200)
  t.equal(created.response.body, '{"name":"Fern"}')
  t.same(await database.readStoredPlants(), [{ id: 8n, name: 'Fern', tag: null }])
})

testOnEveryBackend(t, 'an empty tag is a tag', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const created = await createPlant({ id: 9, name: 'Fern', tag: '' })
  t.same(created.body, { name: 'Fern', tag: '' })
  t.equal((await createPlant({ id: 9, name: 'Fern' })).statusCode, 409, 'no tag differs from an empty tag')
})

testOnEveryBackend(t, 'undeclared properties are accepted, never stored and never echoed', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const created = await createPlant({ id: 10, name: 'Cactus', colour: 'green', nested: { deep: [1, 2] } })
  t.equal(created.statusCode, 200)
  t.same(created.body, { name: 'Cactus' })
  t.same(await database.readStoredPlants(), [{ id: 10n, name: 'Cactus', tag: null }])
})

testOnEveryBackend(t, 'a retry with the same body answers 200 and stores nothing new', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const plant = { id: 11, name: 'Aloe', tag: 'succulent' }
  t.equal((await createPlant(plant)).statusCode, 200)
  const replay = await createPlant(plant)
  t.equal(replay.statusCode, 200)
  t.same(replay.body, { name: 'Aloe', tag: 'succulent' })
  t.same(await database.readStoredPlants(), [{ id: 11n, name: 'Aloe', tag: 'succulent' }])
})

testOnEveryBackend(t, 'the same id with another name or tag is a 409 and changes nothing', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  t.equal((await createPlant({ id: 12, name: 'Aloe', tag: 'succulent' })).statusCode, 200)
  for (const different of [
    { id: 12, name: 'Agave', tag: 'succulent' },
    { id: 12, name: 'Aloe', tag: 'cactus' },
    { id: 12, name: 'Aloe' },
  ]) {
    const conflict = await createPlant(different)
    t.equal(conflict.statusCode, 409, JSON.stringify(different))
    t.same(conflict.body, { error: 40901, message: 'a plant with id 12 already exists with a different name or tag' })
  }
  t.same(await database.readStoredPlants(), [{ id: 12n, name: 'Aloe', tag: 'succulent' }])
})

testOnEveryBackend(t, '50 identical racers all get 200 and one plant is stored', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const responses = await Promise.all(Array.from({ length: 50 }, () => createPlant({ id: 13, name: 'Ivy' })))
  t.same(responses.map((response) => response.statusCode), Array(50).fill(200))
  t.same(await database.readStoredPlants(), [{ id: 13n, name: 'Ivy', tag: null }])
})

testOnEveryBackend(t, '20 racers with different names give one 200 and 19 409s, and the winner is stored', async (t, database) => {
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })
  const names = Array.from({ length: 20 }, (_, index) => `Racer ${index}`)
  const responses = await Promise.all(names.map((name) => createPlant({ id: 14, name })))
  const winners = names.filter((_, index) => responses[index]?.statusCode === 200)
  t.equal(winners.length, 1)
  t.equal(responses.filter((response) => response.statusCode === 409).length, 19)
  t.same(await database.readStoredPlants(), [{ id: 14n, name: winners[0], tag: null }])
})
