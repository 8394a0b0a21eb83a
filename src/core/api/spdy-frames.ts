// SPDY/3.1 framing as kubectl's port-forward speaks it (inside a WebSocket or on an upgraded connection): frame split and build, and the zlib-compressed header blocks.
import { createRequire } from 'node:module';
import { constants as zlibConstants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

// spdy-transport is the npm package that carries SPDY/3's header-compression dictionary (a
// fixed table from the spec). Its own parser cannot serve Kubernetes' streams (it refuses a
// SYN_STREAM without HTTP's :method and :path), so only the dictionary is taken from it.
const spdyTransport = createRequire(import.meta.url)('spdy-transport') as { protocol: { spdy: { dictionary: Record<string, Buffer> } } };
const DICTIONARY = spdyTransport.protocol.spdy.dictionary['3']!;

export const SPDY_VERSION = 3;
export const FLAG_FIN = 0x01;

/** Control frame types (SPDY/3 section 2.6). */
export const SYN_STREAM = 1;
export const SYN_REPLY = 2;
export const RST_STREAM = 3;
export const SETTINGS = 4;
export const PING = 6;
export const GOAWAY = 7;
export const HEADERS = 8;
export const WINDOW_UPDATE = 9;

/** RST_STREAM status codes used here. */
export const RST_PROTOCOL_ERROR = 1;
export const RST_INVALID_STREAM = 2;
export const RST_CANCEL = 5;

/** A data frame, or a control frame with its type-specific body left raw. */
export type SpdyFrame = { control: false; streamId: number; flags: number; data: Buffer } | { control: true; type: number; flags: number; body: Buffer };

const HEADER_BYTES = 8;
/** Frames larger than this are a protocol error: SPDY lengths are 24-bit, and nothing kubectl sends comes close. */
const MAX_FRAME = 1 << 24;

/** Splits a byte stream into frames; bytes of an incomplete frame wait for the next push. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): SpdyFrame[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: SpdyFrame[] = [];
    while (this.pending.length >= HEADER_BYTES) {
      const length = this.pending.readUIntBE(5, 3);
      if (length >= MAX_FRAME) throw new Error(`SPDY frame of ${length} bytes is too large`);
      if (this.pending.length < HEADER_BYTES + length) break;
      const flags = this.pending[4]!;
      const payload = this.pending.subarray(HEADER_BYTES, HEADER_BYTES + length);
      if (this.pending[0]! & 0x80) {
        const version = this.pending.readUInt16BE(0) & 0x7fff;
        if (version !== SPDY_VERSION) throw new Error(`unsupported SPDY version ${version}`);
        frames.push({ control: true, type: this.pending.readUInt16BE(2), flags, body: payload });
      } else {
        frames.push({ control: false, streamId: this.pending.readUInt32BE(0) & 0x7fffffff, flags, data: payload });
      }
      this.pending = this.pending.subarray(HEADER_BYTES + length);
    }
    return frames;
  }
}

function controlFrame(type: number, flags: number, body: Buffer): Buffer {
  const head = Buffer.alloc(HEADER_BYTES);
  head.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  head.writeUInt16BE(type, 2);
  head[4] = flags;
  head.writeUIntBE(body.length, 5, 3);
  return Buffer.concat([head, body]);
}

export function encodeData(streamId: number, data: Buffer, fin = false): Buffer {
  const head = Buffer.alloc(HEADER_BYTES);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head[4] = fin ? FLAG_FIN : 0;
  head.writeUIntBE(data.length, 5, 3);
  return Buffer.concat([head, data]);
}

/** SYN_REPLY: the stream id, then the (already compressed) header block. */
export function encodeSynReply(streamId: number, headerBlock: Buffer, fin = false): Buffer {
  const id = Buffer.alloc(4);
  id.writeUInt32BE(streamId & 0x7fffffff, 0);
  return controlFrame(SYN_REPLY, fin ? FLAG_FIN : 0, Buffer.concat([id, headerBlock]));
}

export function encodeRstStream(streamId: number, status: number): Buffer {
  const body = Buffer.alloc(8);
  body.writeUInt32BE(streamId & 0x7fffffff, 0);
  body.writeUInt32BE(status, 4);
  return controlFrame(RST_STREAM, 0, body);
}

/** PING with the peer's id: the answer SPDY asks for. */
export function encodePing(id: number): Buffer {
  const body = Buffer.alloc(4);
  body.writeUInt32BE(id >>> 0, 0);
  return controlFrame(PING, 0, body);
}

export function encodeGoaway(lastGoodStreamId: number, status = 0): Buffer {
  const body = Buffer.alloc(8);
  body.writeUInt32BE(lastGoodStreamId & 0x7fffffff, 0);
  body.writeUInt32BE(status, 4);
  return controlFrame(GOAWAY, 0, body);
}

/** The stream id that SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS and WINDOW_UPDATE bodies begin with. */
export function streamIdOf(body: Buffer): number {
  if (body.length < 4) throw new Error('SPDY control frame too short for its stream id');
  return body.readUInt32BE(0) & 0x7fffffff;
}

/** A SYN_STREAM's compressed header block (after stream id, associated id, priority and slot). */
export function synStreamHeaderBlock(body: Buffer): Buffer {
  if (body.length < 10) throw new Error('SYN_STREAM too short');
  return body.subarray(10);
}

/** Header pairs as SPDY/3 lays them out before compression: counts and lengths as 32-bit integers, names lower-case. */
export function serializeHeaders(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n, 0);
    return b;
  };
  const entries = Object.entries(headers);
  parts.push(u32(entries.length));
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(value, 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

/** The reverse of serializeHeaders; a header sent several times keeps its NUL-separated values as one string. */
export function parseHeaders(block: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  const u32 = () => {
    if (at + 4 > block.length) throw new Error('SPDY header block truncated');
    const n = block.readUInt32BE(at);
    at += 4;
    return n;
  };
  const str = () => {
    const len = u32();
    if (at + len > block.length) throw new Error('SPDY header block truncated');
    const s = block.toString('utf8', at, at + len);
    at += len;
    return s;
  };
  const count = u32();
  for (let i = 0; i < count; i++) {
    const name = str();
    out[name.toLowerCase()] = str();
  }
  return out;
}

/** Runs one zlib context over successive blocks, each ended by a sync flush, one block at a time. */
class ZlibBlocks {
  private queue: Promise<unknown> = Promise.resolve();
  constructor(private readonly z: Deflate | Inflate) {
    // An error (corrupt input) fails the block being processed; keep the process alive.
    z.on('error', () => undefined);
  }

  run(input: Buffer): Promise<Buffer> {
    const next = this.queue.then(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          const chunks: Buffer[] = [];
          const onData = (c: Buffer) => chunks.push(c);
          const onError = (err: Error) => {
            this.z.off('data', onData);
            reject(err);
          };
          this.z.on('data', onData);
          this.z.once('error', onError);
          this.z.write(input);
          this.z.flush(zlibConstants.Z_SYNC_FLUSH, () => {
            // Output pushed while the flush ran is delivered before the next tick's events end.
            setImmediate(() => {
              this.z.off('data', onData);
              this.z.off('error', onError);
              resolve(Buffer.concat(chunks));
            });
          });
        }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  close(): void {
    this.z.close();
  }
}

/** One direction's header compression state: SPDY shares one zlib stream across all header blocks of a session. */
export class HeaderCodec {
  private readonly inflater = new ZlibBlocks(createInflate({ dictionary: DICTIONARY }));
  private readonly deflater = new ZlibBlocks(createDeflate({ dictionary: DICTIONARY }));

  async decode(block: Buffer): Promise<Record<string, string>> {
    return parseHeaders(await this.inflater.run(block));
  }

  encode(headers: Record<string, string>): Promise<Buffer> {
    return this.deflater.run(serializeHeaders(headers));
  }

  close(): void {
    this.inflater.close();
    this.deflater.close();
  }
}
