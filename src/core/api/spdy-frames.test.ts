// Unit tests for the SPDY/3.1 framing: frames split across and within chunks, and header blocks through one shared zlib context.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  encodeData,
  encodePing,
  encodeSynReply,
  FrameReader,
  HeaderCodec,
  parseHeaders,
  PING,
  serializeHeaders,
  SYN_REPLY,
  streamIdOf,
} from './spdy-frames.js';

describe('SPDY frames', () => {
  it('splits frames that arrive in pieces and several to a chunk', () => {
    const bytes = Buffer.concat([encodeData(3, Buffer.from('hello'), true), encodePing(7), encodeData(5, Buffer.alloc(0))]);
    const reader = new FrameReader();
    const frames = [...reader.push(bytes.subarray(0, 6)), ...reader.push(bytes.subarray(6, 20)), ...reader.push(bytes.subarray(20))];
    assert.equal(frames.length, 3);
    assert.deepEqual(frames[0], { control: false, streamId: 3, flags: 1, data: Buffer.from('hello') });
    assert.equal(frames[1]!.control && frames[1]!.type, PING);
    assert.equal(frames[1]!.control && frames[1]!.body.readUInt32BE(0), 7);
    assert.deepEqual(frames[2], { control: false, streamId: 5, flags: 0, data: Buffer.alloc(0) });
  });

  it('refuses a frame of another SPDY version', () => {
    const frame = encodePing(1);
    frame.writeUInt16BE(0x8002, 0);
    assert.throws(() => new FrameReader().push(frame), /unsupported SPDY version 2/);
  });

  it('lays out header pairs as SPDY/3 does and reads them back', () => {
    const block = serializeHeaders({ StreamType: 'data', port: '8080' });
    assert.equal(block.readUInt32BE(0), 2);
    assert.deepEqual(parseHeaders(block), { streamtype: 'data', port: '8080' });
    assert.throws(() => parseHeaders(block.subarray(0, 10)), /truncated/);
  });

  it('compresses successive header blocks in one context that the peer decompresses in order', async () => {
    const sender = new HeaderCodec();
    const receiver = new HeaderCodec();
    try {
      const sets: Record<string, string>[] = [{ streamtype: 'error', port: '80', requestid: '0' }, { streamtype: 'data', port: '80', requestid: '0' }, {}];
      const blocks = await Promise.all(sets.map((h) => sender.encode(h)));
      // A later block leans on the earlier ones' history: alone it would not decode.
      for (const [i, block] of blocks.entries()) assert.deepEqual(await receiver.decode(block), sets[i]);
      const reply = encodeSynReply(9, blocks[2]!);
      const [frame] = new FrameReader().push(reply);
      assert.ok(frame?.control);
      assert.equal(frame.type, SYN_REPLY);
      assert.equal(streamIdOf(frame.body), 9);
    } finally {
      sender.close();
      receiver.close();
    }
  });
});
