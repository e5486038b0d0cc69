import t from 'tap'
import { loadOpenApiDocument } from '../../src/openapi/openapi-document.js'
import { EndpointUrlPolicy } from '../../src/endpoint-urls/endpoint-url-policy.js'

// openapi.yaml's pattern for a webhook endpoint's url states what the service refuses at
// registration, so that every URL the schema allows is registered (a fuzzer's "schema-valid means
// accepted") and every URL it refuses is refused with the policy's reason: the two must agree.
const { components } = loadOpenApiDocument().document as { components?: { schemas?: Record<string, { properties: Record<string, { pattern: string }> }> } }
const pattern = new RegExp(components!.schemas!.NewWebhookEndpoint!.properties.url!.pattern, 'u')
const policy = new EndpointUrlPolicy('false', async (host) => { throw new Error(`${host} was resolved`) })
const policyAccepts = (url: string): boolean => {
  try {
    policy.check(url)
    return true
  } catch {
    return false
  }
}

const accepted = [
  'https://plants.example.com/webhooks', 'https://plants.example.com/webhooks/new', 'https://a_b.example/', 'https://1.2.3.a/', 'https://a/',
  'https://a.b./', 'https://localhost/', 'https://8.8.8.8/h', 'https://8.8.8.8:443/h?x=1', 'https://172.32.0.1/', 'https://100.128.0.1/',
  'https://198.20.0.1/', 'https://192.0.1.1/', 'https://a:65535/', 'https://[2606:4700::1111]/', 'https://[2a00:1450:4001:80b::200e]:8443/x',
  'https://[2001:200::1]/', 'https://[3fff:1000::1]/', 'https://[2606:4700:0:0:0:0:0:1111]/', 'https://EXAMPLE.com/Path?Q=1', 'https://a/%41?x=%7e', "https://a/p(1)!$&'*+,;=:@~",
]
const refusedByBoth = [
  'http://plants.example.com/', 'ftp://plants.example.com/', 'https://user:pass@plants.example.com/', 'https://plants.example.com/#f',
  'https://a:0/', 'https://127.0.0.1/', 'https://10.0.0.7/hook', 'https://172.16.0.1/', 'https://192.168.0.1/', 'https://169.254.169.254/latest',
  'https://100.64.0.1/', 'https://224.0.0.1/', 'https://0.0.0.0/', 'https://255.255.255.255/', 'https://198.18.0.1/', 'https://192.0.2.1/',
  'https://203.0.113.9/', 'https://[::1]/', 'https://[fe80::1]/', 'https://[fd00::1]/', 'https://[::ffff:10.0.0.1]/', 'https://[64:ff9b::a00:1]/',
  'https://[2001:db8::1]/', 'https://[2001::1]/', 'https://[2001:1ff::1]/', 'https://[3fff::1]/', 'https://[3fff:fff::1]/',
  'https://2130706433/', 'https://0x7f.1/', 'https://127.1/', 'https:8.8.8.8/h', 'https:///8.8.8.8/h', 'https://a:65536/',
]
// Forms no receiver needs, which the pattern leaves out though the policy alone would take them
// (010.0.0.1 is 8.0.0.1 to a WHATWG parser: an address other than it looks; an `xn--` label a
// WHATWG parser may refuse as bad punycode, Node 20's does and Node 24's does not; what a URI
// cannot hold).
const refusedByThePatternOnly = [
  'https://010.0.0.1/', 'https://-edge-.example/', 'https://8.8.8.8./', 'https://[2002:808:808::1]/', 'https://a:080/', 'https://xn--bcher-kva.example/', 'https://xn--a/',
  'https://a/b c', 'https://a/%zz', 'https://a/<>', 'https://a.example\n',
]

t.test('a URL the pattern allows is one the service registers, and parses as a URL', async (t) => {
  for (const url of accepted) {
    t.ok(pattern.test(url), `${url} matches the pattern`)
    t.ok(policyAccepts(url), `${url} is registered`)
  }
})

t.test('a URL the service refuses, the pattern refuses', async (t) => {
  for (const url of [...refusedByBoth, ...refusedByThePatternOnly]) t.notOk(pattern.test(url), `${url} does not match the pattern`)
  for (const url of refusedByBoth) t.notOk(policyAccepts(url), `${url} is refused by the policy too`)
})
