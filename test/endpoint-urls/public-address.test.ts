import { test } from 'tap'
import { EndpointUrlPolicy, type LoopbackPolicy } from '../../src/endpoint-urls/endpoint-url-policy.js'
import { isLoopback, nonPublicKind } from '../../src/endpoint-urls/public-address.js'

// Address classification alone: nothing here is resolved or connected to.

test('IPv6 is public only in global unicast, less its special ranges', async (t) => {
  const refused: Array<[string, RegExp]> = [
    ['::', /not a public address/],
    ['::1', /loopback address/],
    ['::a00:1', /not a public address/], // IPv4-compatible (deprecated), embedding 10.0.0.1
    ['::7f00:1', /not a public address/],
    ['::ffff:0:a9fe:a9fe', /not a public address/], // IPv4-translated, embedding 169.254.169.254
    ['64:ff9b:1::a00:1', /not a public address/], // local-use NAT64 (RFC 8215)
    ['100::1', /not a public address/], // discard-only
    ['2001:db8::1', /not a public address/],
    ['3fff::1', /not a public address/], // documentation (RFC 9637)
    ['2001::1', /not a public address/], // Teredo
    ['5f00::1', /not a public address/], // outside global unicast (SRv6 SIDs)
    ['fe80::1', /link-local address/],
    ['fd00::1', /unique-local address/],
    ['ff02::1', /multicast address/],
    ['::ffff:10.0.0.1', /private address/],
    ['::ffff:a9fe:a9fe', /link-local address/],
    ['64:ff9b::a00:1', /stands for 10\.0\.0\.1, which is a private address/],
    ['64:ff9b::10.0.0.1', /stands for 10\.0\.0\.1, which is a private address/],
    ['2002:a9fe:a9fe::', /stands for 169\.254\.169\.254, which is a link-local address/],
    ['fe80::1%eth0', /not a public address/], // a zone names an interface of this machine
    ['2606:4700::1111%eth0', /not a public address/],
  ]
  for (const [address, kind] of refused) t.match(nonPublicKind(address), kind, `${address} is refused`)
  for (const address of ['2606:4700::1111', '2a00:1450:4001:80b::200e', '64:ff9b::808:808', '2002:808:808::1', '::ffff:93.184.216.34']) {
    t.equal(nonPublicKind(address), undefined, `${address} is public`)
  }
})

test('only this machine\'s loopback addresses count as loopback, not those reached through a translator or relay', async (t) => {
  for (const address of ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1']) t.ok(isLoopback(address), `${address} is loopback`)
  for (const address of ['64:ff9b::7f00:1', '64:ff9b::127.0.0.1', '2002:7f00:1::', '::7f00:1', '::ffff:0:7f00:1', '0.0.0.0', '::', '::1%lo', '::ffff:7f00:1%lo']) {
    t.notOk(isLoopback(address), `${address} is not loopback`)
  }
})

test('with loopback allowed, an address that embeds a loopback one elsewhere is still refused', async (t) => {
  const noResolving = async (host: string): Promise<never> => { throw new Error(`${host} was resolved`) }
  for (const mode of ['true', 'only'] as LoopbackPolicy[]) {
    const policy = new EndpointUrlPolicy(mode, noResolving)
    for (const url of ['http://[64:ff9b::7f00:1]:9/', 'http://[2002:7f00:1::]:9/', 'https://[64:ff9b::127.0.0.1]/', 'http://[::7f00:1]:9/']) {
      const reason = mode === 'only' ? /is not a loopback address, the only ones allowed here/ : /is not a public address/
      t.throws(() => policy.check(url), { message: reason }, `${url} is refused (WEBHOOK_ALLOW_LOOPBACK=${mode})`)
    }
    for (const url of ['http://127.0.0.1:9/', 'http://[::1]:9/']) t.ok(policy.check(url), `${url} is allowed (WEBHOOK_ALLOW_LOOPBACK=${mode})`)
  }
})
