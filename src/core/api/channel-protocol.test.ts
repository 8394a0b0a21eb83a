// Unit tests for the stream channel framing, subprotocol choice and status messages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  chooseProtocol,
  decodeFrame,
  encodeClose,
  encodeFrame,
  encodePortPrefix,
  encodeResize,
  EXEC_PROTOCOLS,
  exitStatus,
  failureStatus,
  outcomeOfStatus,
  parseResize,
  portForwardChannels,
} from './channel-protocol.js';

describe('channel protocol', () => {
  it('frames data behind its channel byte and splits it back', () => {
    const frame = encodeFrame(1, 'hello');
    assert.deepEqual([...frame], [1, ...Buffer.from('hello')]);
    const decoded = decodeFrame(frame);
    assert.equal(decoded?.channel, 1);
    assert.equal(decoded?.data.toString(), 'hello');
    assert.equal(decodeFrame(new Uint8Array(0)), undefined);
    assert.deepEqual([...encodeFrame(3)], [3]);
    assert.throws(() => encodeFrame(256, 'x'), RangeError);
  });

  it('decodes a plain Uint8Array view without copying the wrong bytes', () => {
    const backing = new Uint8Array([9, 9, 2, 65, 66]);
    const decoded = decodeFrame(backing.subarray(2));
    assert.equal(decoded?.channel, 2);
    assert.equal(decoded?.data.toString(), 'AB');
  });

  it('chooses the best subprotocol both sides speak', () => {
    assert.equal(chooseProtocol('v5.channel.k8s.io, v4.channel.k8s.io, v3.channel.k8s.io', EXEC_PROTOCOLS), 'v5.channel.k8s.io');
    assert.equal(chooseProtocol(['v4.channel.k8s.io', 'channel.k8s.io'], EXEC_PROTOCOLS), 'v4.channel.k8s.io');
    assert.equal(chooseProtocol('base64.channel.k8s.io', EXEC_PROTOCOLS), undefined);
    assert.equal(chooseProtocol(undefined, EXEC_PROTOCOLS), undefined);
  });

  it('encodes v5 close and resize messages', () => {
    assert.deepEqual([...encodeClose(0)], [255, 0]);
    const resize = decodeFrame(encodeResize({ Width: 120, Height: 40 }));
    assert.equal(resize?.channel, 4);
    assert.deepEqual(parseResize(resize!.data), { Width: 120, Height: 40 });
    assert.equal(parseResize(Buffer.from('{"Width":0,"Height":3}')), undefined);
    assert.equal(parseResize(Buffer.from('nonsense')), undefined);
  });

  it('reports exit codes as kubelets do and reads them back', () => {
    assert.deepEqual(exitStatus(0), { metadata: {}, status: 'Success' });
    const failed = exitStatus(3, ['sh', '-c', 'exit 3']);
    assert.equal(failed.reason, 'NonZeroExitCode');
    assert.deepEqual(failed.details, { causes: [{ reason: 'ExitCode', message: '3' }] });
    assert.equal(failed.message, 'command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3');
    assert.deepEqual(outcomeOfStatus(Buffer.from(JSON.stringify(failed))), { exitCode: 3 });
    assert.deepEqual(outcomeOfStatus(Buffer.from(JSON.stringify(exitStatus(0)))), { exitCode: 0 });
    assert.deepEqual(outcomeOfStatus(Buffer.from(JSON.stringify(failureStatus('container not running')))), { error: 'container not running' });
    assert.deepEqual(outcomeOfStatus(Buffer.from('plain text failure')), { error: 'plain text failure' });
  });

  it('numbers port-forward channels in pairs and prefixes the port little-endian', () => {
    assert.deepEqual(portForwardChannels(0), { data: 0, error: 1 });
    assert.deepEqual(portForwardChannels(2), { data: 4, error: 5 });
    assert.deepEqual([...encodePortPrefix(8080)], [0x90, 0x1f]);
  });
});
