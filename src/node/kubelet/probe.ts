// Runs one probe (httpGet, tcpSocket or exec) against a container, with Kubernetes' success rules and messages.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Container, Probe } from '../../core/api/pod.js';
import type { ExecResult } from '../../runtime/provider.js';

export interface ProbeContext {
  /** The pod's IP: the host for httpGet and tcpSocket unless the probe names one. */
  podIP?: string;
  container: Container;
  exec(command: string[], timeoutMs: number): Promise<ExecResult>;
}

export interface ProbeOutcome {
  ok: boolean;
  /** Why it failed, in Kubernetes' words (empty on success). */
  message: string;
}

/** A named port resolves through the container's ports, as Kubernetes does. */
export function resolvePort(port: number | string, container: Container): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

const MAX_OUTPUT = 10 * 1024;

export async function runProbe(probe: Probe, ctx: ProbeContext): Promise<ProbeOutcome> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.exec) {
    try {
      const result = await ctx.exec(probe.exec.command ?? [], timeoutMs);
      const output = `${result.stdout}${result.stderr}`.slice(0, MAX_OUTPUT);
      return result.exitCode === 0 ? { ok: true, message: '' } : { ok: false, message: output || `command exited with code ${result.exitCode}` };
    } catch (err) {
      return { ok: false, message: err instanceof Error ? err.message : String(err) };
    }
  }
  const target = probe.httpGet ?? probe.tcpSocket;
  if (!target) return { ok: false, message: 'the probe has no handler' };
  const port = resolvePort(target.port, ctx.container);
  const host = target.host || ctx.podIP;
  if (port === undefined) return { ok: false, message: `port "${String(target.port)}" is not a port of container ${ctx.container.name}` };
  if (!host) return { ok: false, message: 'the pod has no IP yet' };
  if (probe.httpGet) return httpProbe(probe.httpGet, host, port, timeoutMs);
  return tcpProbe(host, port, timeoutMs);
}

async function httpProbe(get: NonNullable<Probe['httpGet']>, host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  const answer = await sendHttpGet(get, host, port, { timeoutMs, userAgent: 'kube-probe/minik8s' });
  if ('error' in answer) return { ok: false, message: answer.error };
  // As Kubernetes: 2xx and 3xx succeed.
  const code = answer.statusCode;
  return code >= 200 && code < 400 ? { ok: true, message: '' } : { ok: false, message: `HTTP probe failed with statuscode: ${code}` };
}

export type HttpGetAction = NonNullable<Probe['httpGet']>;

export interface HttpGetOptions {
  timeoutMs: number;
  /** kube-probe for probes, kube-lifecycle for lifecycle hooks, as Kubernetes names them. */
  userAgent: string;
  signal?: AbortSignal;
}

/**
 * One GET on a fresh connection (never a pooled socket: a stale keep-alive connection would mask
 * a dead server); resolves the status code, or the failure in Go's words (`Get "URL": ...`).
 */
export function sendHttpGet(
  get: HttpGetAction,
  host: string,
  port: number,
  options: HttpGetOptions,
): Promise<{ statusCode: number; url: string } | { error: string; url: string }> {
  const scheme = get.scheme === 'HTTPS' ? 'https' : 'http';
  const path = get.path ? (get.path.startsWith('/') ? get.path : `/${get.path}`) : '/';
  const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
  const headers: Record<string, string> = { 'user-agent': options.userAgent, accept: '*/*' };
  for (const h of get.httpHeaders ?? []) headers[h.name.toLowerCase()] = h.value;
  return new Promise((resolve) => {
    const mod = scheme === 'https' ? https : http;
    const req = mod.get(
      url,
      {
        headers,
        agent: false,
        timeout: options.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(scheme === 'https' ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        res.resume();
        resolve({ statusCode: res.statusCode ?? 0, url });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)));
    req.on('error', (err) => resolve({ error: err.message.startsWith('Get "') ? err.message : `Get "${url}": ${err.message}`, url }));
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (outcome: ProbeOutcome) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.setTimeout(timeoutMs, () => done({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` }));
    socket.once('connect', () => done({ ok: true, message: '' }));
    socket.once('error', (err) => done({ ok: false, message: `dial tcp ${host}:${port}: ${err.message}` }));
  });
}
