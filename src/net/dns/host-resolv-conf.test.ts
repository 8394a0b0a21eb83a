// Table tests for the host resolv.conf that `minik8s dns host enable` writes and `disable` undoes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isOurResolvConf, ourNameserver, renderHostResolvConf, withoutOurNameserver } from './host-resolv-conf.js';
import { parseNameservers } from './resolv-conf.js';

const ORIGINAL = '# from DHCP\nsearch corp.example\nnameserver 192.0.2.53\nnameserver 192.0.2.54\noptions edns0\n';

describe('renderHostResolvConf', () => {
  it('puts the cluster DNS first, keeps the original resolvers after it, and the search and options lines', () => {
    const text = renderHostResolvConf(ORIGINAL, '10.96.0.10');
    assert.deepEqual(parseNameservers(text), ['10.96.0.10', '192.0.2.53', '192.0.2.54']);
    assert.match(text, /^search corp\.example$/m);
    assert.match(text, /^options edns0$/m);
    assert.ok(isOurResolvConf(text));
    assert.equal(ourNameserver(text), '10.96.0.10');
  });

  it('keeps at most three nameservers, as glibc reads, and never lists ours twice', () => {
    const text = renderHostResolvConf('nameserver 10.96.0.10\nnameserver 192.0.2.1\nnameserver 192.0.2.2\nnameserver 192.0.2.3\n', '10.96.0.10');
    assert.deepEqual(parseNameservers(text), ['10.96.0.10', '192.0.2.1', '192.0.2.2']);
  });

  it('a file that is not ours is recognised as such', () => {
    assert.equal(isOurResolvConf(ORIGINAL), false);
    assert.equal(ourNameserver(ORIGINAL), undefined);
  });

  it('without the kept original, taking our lines out leaves the rest', () => {
    const text = renderHostResolvConf(ORIGINAL, '10.96.0.10');
    const back = withoutOurNameserver(text, '10.96.0.10');
    assert.deepEqual(parseNameservers(back), ['192.0.2.53', '192.0.2.54']);
    assert.equal(isOurResolvConf(back), false);
  });
});
