// Kubernetes' stream channel protocol (exec, attach, port-forward over WebSocket): the channel byte framing, subprotocol choice, and the status messages.

/** Channel numbers of exec and attach: the first byte of every binary message. */
export const STDIN_CHANNEL = 0;
export const STDOUT_CHANNEL = 1;
export const STDERR_CHANNEL = 2;
/** The command's outcome as a metav1.Status (v4 and v5), sent once before the stream closes. */
export const ERROR_CHANNEL = 3;
/** Terminal size changes from the client: JSON {Width, Height}. */
export const RESIZE_CHANNEL = 4;
/** v5 only: the data byte names a channel the sender will write no more to (the client's stdin EOF). */
export const CLOSE_CHANNEL = 255;

export const V5_CHANNEL_PROTOCOL = 'v5.channel.k8s.io';
export const V4_CHANNEL_PROTOCOL = 'v4.channel.k8s.io';

/** What exec and attach speak, best first: v5 can say "stdin ended"; v4 only that the command ended. */
export const EXEC_PROTOCOLS: readonly string[] = [V5_CHANNEL_PROTOCOL, V4_CHANNEL_PROTOCOL];
/** Port-forward over WebSocket as the kubelet serves it to non-SPDY clients: the v4 channel framing, a data and an error channel per port. */
export const PORT_FORWARD_PROTOCOLS: readonly string[] = [V4_CHANNEL_PROTOCOL];

/**
 * The subprotocol to answer with: our most preferred of those the client offered (the
 * Sec-WebSocket-Protocol header, comma-separated), or undefined when we share none.
 */
export function chooseProtocol(offered: string | readonly string[] | undefined, supported: readonly string[]): string | undefined {
  const list = (typeof offered === 'string' ? offered.split(',') : (offered ?? [])).map((p) => p.trim()).filter((p) => p !== '');
  return supported.find((p) => list.includes(p));
}

/** One message: the channel byte, then the data. */
export function encodeFrame(channel: number, data: Uint8Array | string = new Uint8Array(0)): Buffer {
  if (!Number.isInteger(channel) || channel < 0 || channel > 255) throw new RangeError(`channel must be a byte, got ${channel}`);
  const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const frame = Buffer.allocUnsafe(body.length + 1);
  frame[0] = channel;
  frame.set(body, 1);
  return frame;
}

/** Splits a message into its channel and data; undefined for an empty message (which carries nothing). */
export function decodeFrame(message: Uint8Array): { channel: number; data: Buffer } | undefined {
  if (message.length === 0) return undefined;
  const buf = Buffer.isBuffer(message) ? message : Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  return { channel: buf[0]!, data: buf.subarray(1) };
}

/** The v5 message that says the sender closed `channel` (e.g. stdin at EOF). */
export function encodeClose(channel: number): Buffer {
  return encodeFrame(CLOSE_CHANNEL, Uint8Array.of(channel));
}

export interface TerminalSize {
  Width: number;
  Height: number;
}

/** A resize message's size; undefined for anything but two positive integers (such messages are ignored, as the kubelet ignores them). */
export function parseResize(data: Uint8Array): TerminalSize | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as Partial<TerminalSize>;
    const ok = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0 && n < 65536;
    return ok(parsed.Width) && ok(parsed.Height) ? { Width: parsed.Width, Height: parsed.Height } : undefined;
  } catch {
    return undefined;
  }
}

export function encodeResize(size: TerminalSize): Buffer {
  return encodeFrame(RESIZE_CHANNEL, JSON.stringify({ Width: size.Width, Height: size.Height }));
}

/** The metav1.Status sent on the error channel when a command ends. */
export interface StreamStatus {
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { causes: { reason: string; message: string }[] };
}

/** How the kubelet reports a command's end: Success for 0, else NonZeroExitCode with the code as an ExitCode cause (kubectl exits with it). */
export function exitStatus(exitCode: number, command: readonly string[] = []): StreamStatus {
  if (exitCode === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

/** A failure that is not the command's own (it could not start, the container went away). */
export function failureStatus(message: string): StreamStatus {
  return { metadata: {}, status: 'Failure', message, reason: 'InternalError' };
}

/**
 * What a client makes of the error channel's Status: the exit code (0 for Success, the
 * ExitCode cause for NonZeroExitCode), or an error message for other failures.
 */
export function outcomeOfStatus(data: Uint8Array): { exitCode: number } | { error: string } {
  let status: Partial<StreamStatus>;
  try {
    status = JSON.parse(Buffer.from(data).toString('utf8')) as Partial<StreamStatus>;
  } catch {
    // Before v4 the channel carried plain text.
    const text = Buffer.from(data).toString('utf8').trim();
    return text === '' ? { exitCode: 0 } : { error: text };
  }
  if (status.status === 'Success') return { exitCode: 0 };
  if (status.reason === 'NonZeroExitCode') {
    const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
    const code = Number(cause?.message);
    if (Number.isInteger(code)) return { exitCode: code };
  }
  return { error: status.message ?? 'the stream ended with an unknown failure' };
}

/** Port-forward: the first message on each of a port's channels begins with the port, two bytes little-endian. */
export function encodePortPrefix(port: number): Buffer {
  const buf = Buffer.alloc(2);
  buf.writeUInt16LE(port, 0);
  return buf;
}

/** Port-forward channels: 2*i carries data for the i-th requested port, 2*i+1 its errors. */
export function portForwardChannels(index: number): { data: number; error: number } {
  return { data: index * 2, error: index * 2 + 1 };
}
