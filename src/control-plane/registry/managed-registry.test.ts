// Unit tests of the managed registry's pure parts: addresses, config text, log reading, leftover recognition.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostPort, isOurRegistry, portInUseFromLog, registryAddresses, registryConfig, registryLayout, summarizeRegistryLog } from './managed-registry.js';

describe('registryAddresses', () => {
  const cases: { name: string; in: Parameters<typeof registryAddresses>[0]; out: ReturnType<typeof registryAddresses> }[] = [
    {
      name: 'wildcard: call and advertise loopback',
      in: { address: '0.0.0.0', port: 5000 },
      out: { listen: '0.0.0.0:5000', endpoint: 'http://127.0.0.1:5000', advertise: '127.0.0.1:5000' },
    },
    {
      name: 'empty address is the wildcard',
      in: { address: '', port: 5001 },
      out: { listen: '0.0.0.0:5001', endpoint: 'http://127.0.0.1:5001', advertise: '127.0.0.1:5001' },
    },
    {
      name: 'a specific address is used everywhere',
      in: { address: '10.0.0.5', port: 5000 },
      out: { listen: '10.0.0.5:5000', endpoint: 'http://10.0.0.5:5000', advertise: '10.0.0.5:5000' },
    },
    {
      name: 'advertise host overrides',
      in: { address: '0.0.0.0', port: 5000, advertiseHost: '192.168.1.2' },
      out: { listen: '0.0.0.0:5000', endpoint: 'http://127.0.0.1:5000', advertise: '192.168.1.2:5000' },
    },
    {
      name: 'TLS: the endpoint is https',
      in: { address: '0.0.0.0', port: 5000, tls: true },
      out: { listen: '0.0.0.0:5000', endpoint: 'https://127.0.0.1:5000', advertise: '127.0.0.1:5000' },
    },
    { name: 'IPv6 wildcard', in: { address: '::', port: 5000 }, out: { listen: '[::]:5000', endpoint: 'http://127.0.0.1:5000', advertise: '127.0.0.1:5000' } },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(registryAddresses(c.in), c.out));
});

describe('hostPort', () => {
  it('brackets IPv6 hosts once', () => {
    assert.equal(hostPort('::1', 5000), '[::1]:5000');
    assert.equal(hostPort('[::1]', 5000), '[::1]:5000');
    assert.equal(hostPort('127.0.0.1', 80), '127.0.0.1:80');
  });
});

describe('registryLayout and registryConfig', () => {
  it('keeps everything in the data dir', () => {
    assert.deepEqual(registryLayout('/var/lib/minik8s'), {
      storeDir: '/var/lib/minik8s/registry',
      configFile: '/var/lib/minik8s/registry.yml',
      pidFile: '/var/lib/minik8s/registry.pid',
      logFile: '/var/lib/minik8s/registry.log',
    });
  });
  it('writes filesystem storage, delete enabled, the listen address, no auth', () => {
    const text = registryConfig({ storeDir: '/d/registry', listen: '0.0.0.0:5000' });
    assert.match(text, /rootdirectory: "\/d\/registry"/);
    assert.match(text, /delete:\n {4}enabled: true/);
    assert.match(text, /addr: "0.0.0.0:5000"/);
    assert.doesNotMatch(text, /auth:/);
    assert.doesNotMatch(text, /tls:/, 'plain HTTP without a certificate (--insecure-http)');
  });
  it('serves HTTPS with the given certificate and key under http.tls', () => {
    const text = registryConfig({ storeDir: '/d/registry', listen: '0.0.0.0:5000', tls: { certFile: '/d/pki/registry.crt', keyFile: '/d/pki/registry.key' } });
    assert.match(
      text,
      /\nhttp:\n {2}addr: "0.0.0.0:5000"\n(.*\n)* {2}tls:\n {4}certificate: "\/d\/pki\/registry.crt"\n {4}key: "\/d\/pki\/registry.key"\n {4}minimumtls: tls1.2\n/,
    );
  });
  it('quotes odd paths safely', () => {
    assert.match(registryConfig({ storeDir: '/d/a "b": c', listen: '0.0.0.0:5000' }), /rootdirectory: "\/d\/a \\"b\\": c"/);
  });
});

describe('isOurRegistry', () => {
  const cases: [string[], boolean][] = [
    [['/usr/bin/docker-registry', 'serve', '/d/registry.yml'], true],
    [['docker-registry', 'serve', '/d/registry.yml'], true],
    [['/usr/bin/docker-registry', 'serve', '/other/registry.yml'], false],
    [['/usr/bin/node', 'serve', '/d/registry.yml'], false],
    [['/usr/bin/docker-registry'], false],
    [[], false],
  ];
  for (const [args, want] of cases) it(`${args.join(' ') || '(none)'} -> ${want}`, () => assert.equal(isOurRegistry(args, '/d/registry.yml'), want));
});

describe('registry log reading', () => {
  const lines = [
    'time="2025-01-01T00:00:00Z" level=info msg="redis not configured" go.version=go1.19',
    'time="2025-01-01T00:00:00Z" level=fatal msg="listen tcp 0.0.0.0:5000: bind: address already in use"',
  ];
  it('finds the port in use', () => {
    assert.equal(portInUseFromLog(lines), 5000);
    assert.equal(portInUseFromLog(lines.slice(0, 1)), undefined);
  });
  it('shows the errors, without timestamps', () => {
    assert.deepEqual(summarizeRegistryLog(lines), ['listen tcp 0.0.0.0:5000: bind: address already in use']);
  });
  it('shows the last lines when there is no error', () => {
    assert.deepEqual(summarizeRegistryLog(lines.slice(0, 1)), ['redis not configured']);
    assert.deepEqual(summarizeRegistryLog(['configuration error: bad yaml']), ['configuration error: bad yaml']);
  });
});
