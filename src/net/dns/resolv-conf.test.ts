// Unit tests for reading upstream resolvers from resolv.conf.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseNameservers, parseUpstreamList, upstreamsFrom } from './resolv-conf.js';

describe('parseNameservers', () => {
  it('reads nameserver lines in order, skipping comments, other lines and junk, at most three', () => {
    const text = [
      '# generated',
      'search example.internal',
      'nameserver 10.0.0.2',
      '  nameserver   1.1.1.1  # inline comment',
      'nameserver not-an-ip',
      'nameserver fe80::1%eth0',
      'nameserver 2001:db8::1',
      'options ndots:2',
      'nameserver 9.9.9.9',
      ';nameserver 8.8.8.8',
    ].join('\n');
    assert.deepEqual(parseNameservers(text), ['10.0.0.2', '1.1.1.1', '2001:db8::1']);
  });
  it('is empty for an empty file', () => assert.deepEqual(parseNameservers(''), []));
});

describe('upstreamsFrom', () => {
  it('leaves out our own address and the cluster DNS address (they would loop)', () => {
    assert.deepEqual(upstreamsFrom(['10.96.0.10', '10.244.1.1', '127.0.0.53'], { exclude: ['10.244.1.1', '10.96.0.10'] }), [
      { address: '127.0.0.53', port: 53 },
    ]);
  });
});

describe('parseUpstreamList (--dns-upstream)', () => {
  const cases: [string, string, { address: string; port: number }[] | RegExp][] = [
    ['one address, port 53', '10.0.0.2', [{ address: '10.0.0.2', port: 53 }]],
    [
      'several, with a port',
      '10.0.0.2, 10.0.0.3:5353',
      [
        { address: '10.0.0.2', port: 53 },
        { address: '10.0.0.3', port: 5353 },
      ],
    ],
    ['a name is refused', 'dns.example', /"dns\.example" is not an IPv4 address/],
    ['a bad port is refused', '10.0.0.2:70000', /"10\.0\.0\.2:70000"/],
  ];
  for (const [name, input, want] of cases) {
    it(name, () => {
      if (want instanceof RegExp) assert.throws(() => parseUpstreamList(input), want);
      else assert.deepEqual(parseUpstreamList(input), want);
    });
  }
});
