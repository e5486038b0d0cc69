import t from 'tap'
import { addressKey } from '../../src/rate-limit/client-address.js'

// Which addresses count as one client: an IPv4 address alone, an IPv6 address with its /64.

t.test('an IPv4 address is its own key', async (t) => {
  t.equal(addressKey('203.0.113.7'), '203.0.113.7')
  t.not(addressKey('203.0.113.7'), addressKey('203.0.113.8'))
})

t.test('an IPv4 address written as IPv6 (a dual-stack socket) is the IPv4 address', async (t) => {
  t.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7')
  t.equal(addressKey('::FFFF:203.0.113.7'), '203.0.113.7')
  t.not(addressKey('::ffff:203.0.113.7'), addressKey('::ffff:198.51.100.1'), 'not one /64 for every IPv4 client')
})

t.test('IPv6 addresses of one /64 share a key, however they are written', async (t) => {
  const key = '2001:db8:0:1::/64'
  for (const address of [
    '2001:db8:0:1::1',
    '2001:db8:0:1:ffff:ffff:ffff:ffff',
    '2001:0db8:0000:0001:0000:0000:0000:0002',
    '2001:DB8:0:1:a:b:c:d',
    '2001:db8::1:0:0:0:3',
    '2001:db8:0:1::192.0.2.1',
  ]) {
    t.equal(addressKey(address), key, address)
  }
})

t.test('IPv6 addresses of other /64s get other keys', async (t) => {
  t.equal(addressKey('2001:db8:0:2::1'), '2001:db8:0:2::/64')
  t.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(addressKey('::1'), '0:0:0:0::/64')
  t.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone index is dropped')
  t.equal(addressKey('1:2:3:4:5:6:7:8'), '1:2:3:4::/64')
  t.equal(addressKey('1:2:3::'), '1:2:3:0::/64')
})
