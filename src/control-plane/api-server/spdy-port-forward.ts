// kubectl port-forward's SPDY/3.1 session, served by the API server (tunnelled in WebSocket messages, or on a plain SPDY upgrade): each connection's error and data streams joined to one kubelet port-forward WebSocket.
import { WebSocket } from 'ws';
import { decodeFrame, encodeFrame } from '../../core/api/channel-protocol.js';
import {
  encodeData,
  encodePing,
  encodeRstStream,
  encodeSynReply,
  FrameReader,
  GOAWAY,
  HeaderCodec,
  PING,
  RST_PROTOCOL_ERROR,
  RST_STREAM,
  type SpdyFrame,
  streamIdOf,
  SYN_STREAM,
  synStreamHeaderBlock,
} from '../../core/api/spdy-frames.js';

/** The subprotocol kubectl 1.31+ asks for first: SPDY framing carried in binary WebSocket messages. */
export const SPDY_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';
/** What kubectl sends in X-Stream-Protocol-Version on a plain SPDY upgrade, and expects back. */
export const PORT_FORWARD_STREAM_PROTOCOL = 'portforward.k8s.io';

/** A byte pipe the session runs over: a tunnelling WebSocket or an upgraded socket. */
export interface ByteTransport {
  send(data: Buffer): void;
  onData(listener: (data: Buffer) => void): void;
  onClose(listener: () => void): void;
  close(): void;
}

/** A tunnelling WebSocket as a byte pipe: every binary message is the next bytes of the SPDY session. */
export function webSocketTransport(ws: WebSocket): ByteTransport {
  ws.on('error', () => ws.terminate());
  return {
    send: (data) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(data, { binary: true });
    },
    onData: (listener) => ws.on('message', (data: Buffer) => listener(data)),
    onClose: (listener) => ws.on('close', listener),
    close: () => ws.close(1000),
  };
}

/** An upgraded socket as a byte pipe, with the bytes that came with the upgrade request first. */
export function socketTransport(socket: NodeJS.ReadWriteStream & { destroy(): void }, head: Buffer): ByteTransport {
  return {
    send: (data) => {
      socket.write(data);
    },
    onData: (listener) => {
      if (head.length > 0) queueMicrotask(() => listener(head));
      socket.on('data', (d: Buffer) => listener(d));
    },
    onClose: (listener) => socket.on('close', listener),
    close: () => socket.end(),
  };
}

export interface SpdyPortForwardOptions {
  /** Opens the kubelet's port-forward WebSocket (v4 channels: 0 data, 1 error) for one port of the pod. */
  dial(port: number): Promise<WebSocket>;
  /** "namespace/name", for error messages as the kubelet words them. */
  podName: string;
}

interface Pair {
  port: number;
  dataStream?: number;
  errorStream?: number;
  upstream?: WebSocket;
  /** Client bytes that came before the kubelet connection opened. */
  early: Buffer[];
  done: boolean;
}

/**
 * Serves one SPDY session: answers each stream kubectl opens, pairs the error and data streams
 * of a connection by requestID, and carries their bytes to and from the kubelet.
 */
export function serveSpdyPortForward(transport: ByteTransport, options: SpdyPortForwardOptions): void {
  const reader = new FrameReader();
  const codec = new HeaderCodec();
  const pairs = new Map<string, Pair>();
  /** Streams we have ended (FIN sent): nothing more may go out on them. */
  const ended = new Set<number>();
  const streamPair = new Map<number, Pair>();
  let closed = false;
  let chain: Promise<void> = Promise.resolve();

  const send = (data: Buffer) => {
    if (!closed) transport.send(data);
  };
  const sendData = (stream: number | undefined, data: Buffer, fin = false) => {
    if (stream === undefined || ended.has(stream)) return;
    if (fin) ended.add(stream);
    send(encodeData(stream, data, fin));
  };
  const finish = (pair: Pair, errorText?: string) => {
    if (pair.done) return;
    pair.done = true;
    if (errorText) sendData(pair.errorStream, Buffer.from(errorText));
    sendData(pair.dataStream, Buffer.alloc(0), true);
    sendData(pair.errorStream, Buffer.alloc(0), true);
    pair.upstream?.close(1000);
  };
  const shutdown = () => {
    if (closed) return;
    closed = true;
    for (const pair of pairs.values()) pair.upstream?.terminate();
    codec.close();
    transport.close();
  };

  const connectPair = (pair: Pair) => {
    options.dial(pair.port).then(
      (ws) => {
        if (pair.done || closed) {
          ws.terminate();
          return;
        }
        pair.upstream = ws;
        for (const chunk of pair.early.splice(0)) ws.send(encodeFrame(0, chunk));
        // The kubelet's first message on each channel is the port it serves; the bytes follow.
        const seen = new Set<number>();
        ws.on('message', (message: Buffer) => {
          const frame = decodeFrame(message);
          if (!frame) return;
          if (!seen.has(frame.channel)) {
            seen.add(frame.channel);
            return;
          }
          if (frame.channel === 0) sendData(pair.dataStream, frame.data);
          else if (frame.channel === 1) sendData(pair.errorStream, frame.data);
        });
        ws.on('close', () => finish(pair));
        ws.on('error', () => ws.terminate());
      },
      (err: unknown) => finish(pair, `error forwarding port ${pair.port} to pod ${options.podName}: ${err instanceof Error ? err.message : String(err)}`),
    );
  };

  const onSynStream = async (body: Buffer) => {
    const id = streamIdOf(body);
    const headers = await codec.decode(synStreamHeaderBlock(body));
    const type = headers.streamtype;
    const port = Number(headers.port);
    const requestId = headers.requestid ?? String(port);
    if ((type !== 'data' && type !== 'error') || !/^\d+$/.test(headers.port ?? '') || port < 1 || port > 65535) {
      send(encodeRstStream(id, RST_PROTOCOL_ERROR));
      return;
    }
    send(encodeSynReply(id, await codec.encode({})));
    let pair = pairs.get(requestId);
    if (!pair) {
      pair = { port, early: [], done: false };
      pairs.set(requestId, pair);
      connectPair(pair);
    }
    if (type === 'data') pair.dataStream = id;
    else pair.errorStream = id;
    streamPair.set(id, pair);
  };

  const onFrame = async (frame: SpdyFrame) => {
    if (!frame.control) {
      const pair = streamPair.get(frame.streamId);
      // Bytes for the pod; the error stream carries nothing from the client. A FIN from the
      // client is not passed on: the kubelet's channel protocol has no half-close, so the
      // connection lasts until the pod's side ends it.
      if (!pair || frame.streamId !== pair.dataStream || frame.data.length === 0) return;
      if (pair.upstream) pair.upstream.send(encodeFrame(0, frame.data));
      else pair.early.push(Buffer.from(frame.data));
      return;
    }
    switch (frame.type) {
      case SYN_STREAM:
        await onSynStream(frame.body);
        break;
      case RST_STREAM: {
        const pair = streamPair.get(streamIdOf(frame.body));
        if (pair) finish(pair);
        break;
      }
      case PING:
        send(encodePing(frame.body.readUInt32BE(0)));
        break;
      case GOAWAY:
        shutdown();
        break;
      default:
        // SETTINGS, WINDOW_UPDATE, HEADERS: nothing to act on (no flow control is enforced either way).
        break;
    }
  };

  transport.onData((data) => {
    let frames: SpdyFrame[];
    try {
      frames = reader.push(data);
    } catch {
      shutdown();
      return;
    }
    for (const frame of frames) {
      chain = chain.then(() => onFrame(frame)).catch(() => shutdown());
    }
  });
  transport.onClose(shutdown);
}
