// `minik8s port-forward`: listens locally and carries each connection to the pod's port over its own WebSocket (the kubelet's v4 channel port-forward, through the API server).
import { createServer, type Server, type Socket } from 'node:net';
import { decodeFrame, encodeFrame, PORT_FORWARD_PROTOCOLS, portForwardChannels } from '../core/api/channel-protocol.js';
import { podKind } from '../core/api/pod.js';
import { kindObjectPath } from '../core/client/api-client.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { openStream } from './stream-socket.js';

export interface PortForwardArgs {
  pod?: string;
  ports: string[];
  address?: string;
}

/** `LOCAL:REMOTE`, `REMOTE` (same port locally) or `:REMOTE` (a free local port, 0). */
export function parsePortPair(spec: string): { local: number; remote: number } {
  const m = /^(\d*)(?::(\d+))?$/.exec(spec);
  const valid = (n: number) => Number.isInteger(n) && n >= 0 && n <= 65535;
  if (m) {
    const remote = Number(m[2] ?? m[1]);
    const local = m[2] === undefined ? remote : m[1] === '' ? 0 : Number(m[1]);
    if (m[1] !== '' || m[2] !== undefined) {
      if (valid(local) && valid(remote) && remote > 0) return { local, remote };
    }
  }
  throw new CliError(`invalid port specification "${spec}": expected LOCAL:REMOTE or REMOTE`);
}

/** The pod's name from `POD` or `pod/POD` (port-forward to a Service or Deployment is not supported yet). */
function podOf(target: string | undefined): string {
  if (!target) throw new CliError('TYPE/NAME and list of ports are required for port-forward');
  const slash = target.indexOf('/');
  if (slash < 0) return target;
  const kind = target.slice(0, slash).toLowerCase();
  if (kind !== 'pod' && kind !== 'pods' && kind !== 'po') throw new CliError(`port-forward to ${kind} is not supported: name a pod (pod/NAME)`);
  return target.slice(slash + 1);
}

/** Carries one accepted connection over its own stream; the first message on each channel is the port's prefix, skipped. */
async function carry(ctx: CliContext, path: string, remote: number, socket: Socket): Promise<void> {
  socket.pause();
  const query = new URLSearchParams({ ports: String(remote) });
  const ws = await openStream(ctx, path, query, PORT_FORWARD_PROTOCOLS).catch((err: Error) => {
    ctx.err(`error: forwarding to port ${remote} failed: ${err.message}\n`);
    socket.destroy();
    return undefined;
  });
  if (!ws) return;
  const { data, error } = portForwardChannels(0);
  const prefixed = new Set<number>();
  ws.on('message', (message: Buffer) => {
    const frame = decodeFrame(message);
    if (!frame) return;
    let payload = frame.data;
    if (!prefixed.has(frame.channel)) {
      prefixed.add(frame.channel);
      payload = payload.subarray(2);
    }
    if (payload.length === 0) return;
    if (frame.channel === data) socket.write(payload);
    else if (frame.channel === error) ctx.err(`error: ${payload.toString('utf8')}\n`);
  });
  ws.on('close', () => socket.end());
  ws.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    if (ws.readyState === ws.OPEN) ws.send(encodeFrame(data, chunk));
  });
  socket.on('close', () => ws.close());
  socket.on('error', () => ws.close());
  socket.resume();
}

export async function runPortForward(ctx: CliContext, args: PortForwardArgs): Promise<number> {
  const name = podOf(args.pod);
  if (args.ports.length === 0) throw new CliError('at least 1 PORT is required for port-forward');
  const pairs = args.ports.map(parsePortPair);
  // The pod must exist (kubectl checks it is running too).
  await ctx.client().get(podKind, { namespace: ctx.namespace, name });
  const path = `${kindObjectPath(podKind, name, ctx.namespace)}/portforward`;
  const address = args.address ?? '127.0.0.1';
  const servers: Server[] = [];
  for (const { local, remote } of pairs) {
    const server = createServer((socket) => {
      ctx.out(`Handling connection for ${remote}\n`);
      void carry(ctx, path, remote, socket);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(new CliError(`unable to listen on port ${local}: ${err.code === 'EADDRINUSE' ? 'address already in use' : err.message}`)),
      );
      server.listen(local, address, () => resolve());
    });
    const port = (server.address() as { port: number }).port;
    ctx.out(`Forwarding from ${address}:${port} -> ${remote}\n`);
    servers.push(server);
  }
  // Runs until interrupted, as kubectl's does.
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    ctx.signal?.addEventListener('abort', stop, { once: true });
  });
  for (const s of servers) s.close();
  return 0;
}
