// The DNS server's sockets: UDP and TCP on one address and port, answering from the zone and forwarding the rest upstream.
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { decode, encode, type DecodedPacket } from 'dns-packet';
import type { ClusterZone } from './cluster-zone.js';
import { answerQuery, encodeForUdp, errorResponse, RCODE, udpLimitFor } from './dns-answer.js';
import type { Upstream } from './resolv-conf.js';
import { frame, TcpFrameReader } from './tcp-framing.js';

export const DEFAULT_DNS_PORT = 53;
/** One upstream gets this long to answer before the next is tried. */
export const DEFAULT_FORWARD_TIMEOUT_MS = 2000;
/** All upstreams together: under glibc's 5 s, so a client hears SERVFAIL before it gives up on us. */
export const DEFAULT_FORWARD_BUDGET_MS = 4000;
/** A TCP connection with no query for this long is closed (RFC 7766 suggests seconds, not minutes). */
const TCP_IDLE_MS = 10_000;
/** The same upstream's failure is logged at most this often: a node without a reachable resolver would otherwise log every lookup. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

export interface DnsServerOptions {
  /** The address to listen on (only that one: another resolver may hold port 53 on the node's other addresses). */
  address: string;
  /** Default 53; 0 picks a free port (the same for UDP and TCP). */
  port?: number;
  /** The current snapshot; called per query. */
  zone(): ClusterZone;
  /** Where names that are not ours go; called per forwarded query. */
  upstreams(): readonly Upstream[];
  forwardTimeoutMs?: number;
  forwardBudgetMs?: number;
  ttlSeconds?: number;
  log?: (message: string) => void;
}

type Transport = 'udp' | 'tcp';

export class DnsServer {
  readonly #o: DnsServerOptions;
  readonly #log: (message: string) => void;
  readonly #failureLogged = new Map<string, number>();
  readonly #connections = new Set<Socket>();
  #udp: UdpSocket | undefined;
  #tcp: Server | undefined;
  #port = 0;

  constructor(options: DnsServerOptions) {
    this.#o = options;
    this.#log = options.log ?? (() => {});
  }

  /** The port both sockets listen on (after listen). */
  get port(): number {
    return this.#port;
  }

  /** Binds UDP then TCP on the same port; rejects with the socket error (EADDRINUSE, EACCES, EADDRNOTAVAIL). */
  async listen(): Promise<number> {
    const wanted = this.#o.port ?? DEFAULT_DNS_PORT;
    // With port 0 the kernel picks the UDP port; TCP may find it taken by someone else: pick again.
    for (let attempt = 0; ; attempt++) {
      const udp = await this.#bindUdp(wanted);
      const port = udp.address().port;
      try {
        this.#tcp = await this.#listenTcp(port);
        this.#udp = udp;
        this.#port = port;
        return port;
      } catch (err) {
        udp.close();
        if (wanted !== 0 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 10) throw err;
      }
    }
  }

  /** Serves until `signal` aborts, then closes both sockets and every open connection. */
  async start(signal: AbortSignal): Promise<void> {
    if (!this.#udp) await this.listen();
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await this.close();
  }

  async close(): Promise<void> {
    const udp = this.#udp;
    const tcp = this.#tcp;
    this.#udp = undefined;
    this.#tcp = undefined;
    for (const c of this.#connections) c.destroy();
    await Promise.all([udp && new Promise<void>((resolve) => udp.close(() => resolve())), tcp && new Promise<void>((resolve) => tcp.close(() => resolve()))]);
  }

  #bindUdp(port: number): Promise<UdpSocket> {
    const socket = createSocket(isIP(this.#o.address) === 6 ? 'udp6' : 'udp4');
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ address: this.#o.address, port, exclusive: true }, () => {
        socket.off('error', reject);
        socket.on('error', (err) => this.#log(`dns: UDP socket: ${err.message}`));
        socket.on('message', (msg, rinfo) => this.#onUdp(socket, msg, rinfo));
        resolve(socket);
      });
    });
  }

  #listenTcp(port: number): Promise<Server> {
    const server = createServer((socket) => this.#onTcp(socket));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.#o.address, port, exclusive: true }, () => {
        server.off('error', reject);
        server.on('error', (err) => this.#log(`dns: TCP server: ${err.message}`));
        resolve(server);
      });
    });
  }

  #onUdp(socket: UdpSocket, msg: Buffer, rinfo: RemoteInfo): void {
    void this.#handle(msg, 'udp').then((reply) => {
      if (reply && this.#udp === socket) socket.send(reply, rinfo.port, rinfo.address);
    });
  }

  #onTcp(socket: Socket): void {
    this.#connections.add(socket);
    const reader = new TcpFrameReader();
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
    socket.on('data', (chunk) => {
      for (const msg of reader.push(chunk)) {
        // Answers may go back out of order (RFC 7766 6.2.1.1): each carries its query's id.
        void this.#handle(msg, 'tcp').then((reply) => {
          if (reply && !socket.destroyed) socket.write(frame(reply));
        });
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.#connections.delete(socket));
  }

  /** One query in, the bytes to send back (or nothing). Never throws. */
  async #handle(msg: Buffer, transport: Transport): Promise<Buffer | undefined> {
    let query: DecodedPacket;
    try {
      query = decode(msg);
    } catch {
      // Undecodable: FORMERR with its id if it has a header at all, and it claims to be a query.
      if (msg.length < 12 || (msg[2]! & 0x80) !== 0) return undefined;
      return encode(errorResponse({ id: msg.readUInt16BE(0), flags: 0, questions: [] }, RCODE.FORMERR));
    }
    try {
      const outcome = answerQuery(query, this.#o.zone(), { ttlSeconds: this.#o.ttlSeconds });
      if (outcome.type === 'drop') return undefined;
      if (outcome.type === 'answer') return transport === 'udp' ? encodeForUdp(outcome.response, udpLimitFor(query)) : encode(outcome.response);
      const reply = await this.#forward(msg, query, transport);
      return reply ?? encode(errorResponse(query, RCODE.SERVFAIL));
    } catch (err) {
      this.#log(`dns: answering ${query.questions?.[0]?.name ?? '?'}: ${err instanceof Error ? err.message : String(err)}`);
      return encode(errorResponse(query, RCODE.SERVFAIL));
    }
  }

  /** The first upstream answer, relayed as it came; undefined when none answered in time. */
  async #forward(msg: Buffer, query: DecodedPacket, transport: Transport): Promise<Buffer | undefined> {
    const upstreams = this.#o.upstreams();
    const deadline = Date.now() + (this.#o.forwardBudgetMs ?? DEFAULT_FORWARD_BUDGET_MS);
    for (const upstream of upstreams) {
      const timeoutMs = Math.min(this.#o.forwardTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS, deadline - Date.now());
      if (timeoutMs <= 0) break;
      try {
        return transport === 'udp' ? await forwardUdp(msg, upstream, timeoutMs) : await forwardTcp(msg, upstream, timeoutMs);
      } catch (err) {
        this.#logFailure(upstream, query, err);
      }
    }
    if (upstreams.length === 0) this.#logFailure(undefined, query, new Error('no upstream resolver (no usable nameserver in resolv.conf)'));
    return undefined;
  }

  #logFailure(upstream: Upstream | undefined, query: DecodedPacket, err: unknown): void {
    const key = upstream ? `${upstream.address}:${upstream.port}` : '';
    const now = Date.now();
    if (now - (this.#failureLogged.get(key) ?? -Infinity) < FAILURE_LOG_INTERVAL_MS) return;
    this.#failureLogged.set(key, now);
    const where = upstream ? `forwarding ${query.questions?.[0]?.name ?? '?'} to ${key}` : `forwarding ${query.questions?.[0]?.name ?? '?'}`;
    this.#log(`dns: ${where}: ${err instanceof Error ? err.message : String(err)} (logged once a minute)`);
  }
}

/** Sends `msg` to the upstream from a fresh socket (so concurrent queries with one id cannot mix), waits for the reply with that id. */
export function forwardUdp(msg: Buffer, upstream: Upstream, timeoutMs: number): Promise<Buffer> {
  const socket = createSocket(isIP(upstream.address) === 6 ? 'udp6' : 'udp4');
  const id = msg.readUInt16BE(0);
  let timer: NodeJS.Timeout | undefined;
  return new Promise<Buffer>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
    socket.on('error', (err) => reject(err));
    socket.on('message', (reply, rinfo) => {
      // Only the upstream's answer to this query counts; anything else is ignored, as resolvers do against spoofing.
      if (rinfo.address !== upstream.address || rinfo.port !== upstream.port || reply.length < 12 || reply.readUInt16BE(0) !== id) return;
      resolve(reply);
    });
    socket.send(msg, upstream.port, upstream.address, (err) => {
      if (err) reject(err);
    });
  }).finally(() => {
    clearTimeout(timer);
    socket.close();
  });
}

/** Asks the upstream over TCP (for clients that came over TCP, often after a truncated UDP answer). */
export function forwardTcp(msg: Buffer, upstream: Upstream, timeoutMs: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const socket = connect({ host: upstream.address, port: upstream.port });
    const reader = new TcpFrameReader();
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer in ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (err: Error | undefined, reply?: Buffer) => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(reply!);
    };
    socket.on('connect', () => socket.write(frame(msg)));
    socket.on('data', (chunk) => {
      const [reply] = reader.push(chunk);
      if (reply) finish(undefined, reply);
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(new Error('the upstream closed the connection without an answer')));
  });
}
