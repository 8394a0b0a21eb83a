// Unit tests for DNS-over-TCP framing: whole, split and coalesced messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { frame, TcpFrameReader } from './tcp-framing.js';

describe('TcpFrameReader', () => {
  const a = Buffer.from('hello');
  const b = Buffer.from('dns!');
  it('reads one framed message', () => assert.deepEqual(new TcpFrameReader().push(frame(a)), [a]));
  it('reads two messages from one chunk', () => assert.deepEqual(new TcpFrameReader().push(Buffer.concat([frame(a), frame(b)])), [a, b]));
  it('waits for a message split across chunks, even inside the length', () => {
    const r = new TcpFrameReader();
    const bytes = Buffer.concat([frame(a), frame(b)]);
    assert.deepEqual(r.push(bytes.subarray(0, 1)), []);
    assert.deepEqual(r.push(bytes.subarray(1, 4)), []);
    assert.equal(r.pending, 4);
    assert.deepEqual(r.push(bytes.subarray(4, 9)), [a]);
    assert.deepEqual(r.push(bytes.subarray(9)), [b]);
    assert.equal(r.pending, 0);
  });
  it('refuses a message too long for the prefix', () => assert.throws(() => frame(Buffer.alloc(70_000)), /does not fit/));
});
