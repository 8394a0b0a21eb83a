// DNS over TCP: each message preceded by its length in two bytes (RFC 1035 4.2.2); splits a stream into messages.

/** Largest DNS message: the length prefix is 16 bits. */
export const MAX_TCP_MESSAGE = 0xffff;

/** Collects stream chunks and hands out whole messages; a connection may carry several, and a message may span chunks. */
export class TcpFrameReader {
  #buffer: Buffer = Buffer.alloc(0);

  /** Adds a chunk; returns the messages it completed, in order. */
  push(chunk: Buffer): Buffer[] {
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk;
    const messages: Buffer[] = [];
    while (this.#buffer.length >= 2) {
      const length = this.#buffer.readUInt16BE(0);
      if (this.#buffer.length < 2 + length) break;
      messages.push(this.#buffer.subarray(2, 2 + length));
      this.#buffer = this.#buffer.subarray(2 + length);
    }
    return messages;
  }

  /** Bytes of an unfinished message. */
  get pending(): number {
    return this.#buffer.length;
  }
}

/** One message with its length prefix. */
export function frame(message: Buffer): Buffer {
  if (message.length > MAX_TCP_MESSAGE) throw new Error(`DNS message of ${message.length} bytes does not fit a TCP frame`);
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(message.length, 0);
  return Buffer.concat([prefix, message]);
}
