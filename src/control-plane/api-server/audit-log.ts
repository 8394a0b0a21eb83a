// The audit log: one audit.k8s.io/v1 Event per request at the Metadata level (who did what to which object, and the answer), as JSON lines, rotated by size.
import { randomUUID } from 'node:crypto';
import { closeSync, fchmodSync, fstatSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Context, MiddlewareHandler } from 'hono';
import type { UserInfo } from './auth.js';
import { requestAttributes } from './authorization.js';

/** Where audit lines go: a rotating file, stdout, or (tests) anything that takes a line. */
export interface AuditSink {
  write(line: string): void;
  close(): void;
}

export interface AuditRecordInput {
  auditID: string;
  method: string;
  /** The request's path with its query, as received. */
  uri: string;
  path: string;
  watch?: string | null;
  user?: UserInfo;
  sourceIP?: string;
  userAgent?: string;
  code: number;
  received: Date;
  completed: Date;
}

/** Who sends a request without a credential we accept, as Kubernetes names them in its audit events. */
const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

/**
 * Query parameters that could carry a credential. None of our routes reads one from the query,
 * but a client may still put one there, and the log must never hold a secret.
 */
const SECRET_QUERY = /^(access_token|token|password|secret)$/i;

/** The request URI with credential-looking query values blanked. */
function safeUri(uri: string): string {
  const q = uri.indexOf('?');
  if (q < 0) return uri;
  const params = new URLSearchParams(uri.slice(q + 1));
  let changed = false;
  for (const key of [...params.keys()]) {
    if (SECRET_QUERY.test(key)) {
      params.set(key, 'REDACTED');
      changed = true;
    }
  }
  return changed ? `${uri.slice(0, q)}?${params.toString()}` : uri;
}

/** Kubernetes writes audit timestamps with microseconds; Date gives milliseconds, padded so tools parse them alike. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * One audit event, in audit.k8s.io/v1's Event shape so that tools reading kube-apiserver's logs
 * read ours. Metadata level: the request and response bodies are never in it, so neither are
 * Secret data nor tokens (the Authorization header is not an input at all). The latency, which
 * Kubernetes leaves to the two timestamps, is also given as an annotation for people reading it.
 */
export function auditRecord(input: AuditRecordInput): Record<string, unknown> {
  const user = input.user ?? ANONYMOUS;
  const attrs = requestAttributes(input.method, input.path, { watch: input.watch });
  const r = attrs.resource;
  const objectRef = r
    ? {
        resource: r.resource,
        ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
        ...(r.name !== undefined ? { name: r.name } : {}),
        ...(r.group ? { apiGroup: r.group } : {}),
        apiVersion: r.version,
        ...(r.subresource !== undefined ? { subresource: r.subresource } : {}),
      }
    : undefined;
  return {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID: input.auditID,
    // A watch is recorded when its stream starts (Kubernetes' ResponseStarted), every other request when answered.
    stage: attrs.verb === 'watch' && input.code < 300 ? 'ResponseStarted' : 'ResponseComplete',
    requestURI: safeUri(input.uri),
    verb: attrs.verb,
    user: { username: user.name, groups: [...user.groups] },
    sourceIPs: input.sourceIP ? [input.sourceIP] : [],
    ...(input.userAgent ? { userAgent: input.userAgent } : {}),
    ...(objectRef ? { objectRef } : {}),
    responseStatus: { metadata: {}, code: input.code },
    requestReceivedTimestamp: microTime(input.received),
    stageTimestamp: microTime(input.completed),
    annotations: { 'minik8s.io/latency-ms': String(input.completed.getTime() - input.received.getTime()) },
  };
}

export interface AuditMiddlewareOptions {
  sink: AuditSink;
  /** Paths not audited (health probes would fill the log). */
  skipPaths?: ReadonlySet<string>;
  now?: () => Date;
}

/** The peer address of a request served by @hono/node-server (absent when a test calls app.request()). */
function remoteAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  const addr = env?.incoming?.socket?.remoteAddress;
  // IPv4 clients of a dual-stack listener appear as ::ffff:a.b.c.d.
  return addr?.startsWith('::ffff:') ? addr.slice(7) : addr;
}

/**
 * Placed ahead of authentication, so that refused credentials are recorded too (as
 * system:anonymous with 401, as Kubernetes records them); the user is read once the request
 * has been answered, by which time authentication has set it. Errors thrown further in have
 * been rendered by the app's onError by then, so the code is the one sent.
 */
export function auditMiddleware(options: AuditMiddlewareOptions): MiddlewareHandler {
  const now = options.now ?? (() => new Date());
  return async (c: Context, next) => {
    if (options.skipPaths?.has(c.req.path)) return next();
    const received = now();
    const auditID = randomUUID();
    // Kubernetes hands the ID back so that a client's failure can be found in the log.
    c.header('Audit-ID', auditID);
    try {
      await next();
    } finally {
      const url = new URL(c.req.url);
      const record = auditRecord({
        auditID,
        method: c.req.method,
        uri: url.pathname + url.search,
        path: c.req.path,
        watch: c.req.method === 'GET' ? c.req.query('watch') : undefined,
        user: c.get('user') as UserInfo | undefined,
        sourceIP: remoteAddress(c),
        userAgent: c.req.header('user-agent'),
        code: c.res.status,
        received,
        completed: now(),
      });
      try {
        options.sink.write(JSON.stringify(record));
      } catch {
        // A full disk must not fail the request it would have recorded (kube-apiserver's
        // default, non-blocking mode drops events the same way).
      }
    }
  };
}

/** stdout, for `--audit-log-path -` (a supervisor collecting the master's output collects the log). */
export function stdoutAuditSink(): AuditSink {
  return {
    write: (line) => {
      process.stdout.write(`${line}\n`);
    },
    close: () => {},
  };
}

export interface RotatingFileOptions {
  path: string;
  /** Rotate before the file would pass this many bytes; 0: never rotate. */
  maxBytes: number;
  /** Rotated files kept (oldest removed first); 0: keep them all, as kube-apiserver does. */
  maxBackups: number;
  now?: () => Date;
}

/** `audit-2026-01-02T03-04-05.678.log` for `audit.log`: lumberjack's names, which kube-apiserver's rotated logs have. */
export function backupName(path: string, at: Date): string {
  const ext = extname(path);
  const stem = basename(path, ext);
  const stamp = at.toISOString().replace(/Z$/, '').replace(/:/g, '-');
  return join(dirname(path), `${stem}-${stamp}${ext}`);
}

/**
 * Appends lines to `path` (0600: the log names every user and object), rotating by size.
 * Writes are synchronous: a line is on disk, in order, before the next request's, and rotation
 * needs no coordination with writes in flight.
 */
export class RotatingFileSink implements AuditSink {
  readonly #options: RotatingFileOptions;
  #fd: number;
  #size: number;

  constructor(options: RotatingFileOptions) {
    this.#options = options;
    this.#fd = this.#open();
    this.#size = fstatSync(this.#fd).size;
  }

  #open(): number {
    const fd = openSync(this.#options.path, 'a', 0o600);
    // A file that existed before keeps its mode through open(): narrow it.
    fchmodSync(fd, 0o600);
    return fd;
  }

  write(line: string): void {
    const bytes = Buffer.from(`${line}\n`);
    if (this.#options.maxBytes > 0 && this.#size > 0 && this.#size + bytes.length > this.#options.maxBytes) this.#rotate();
    writeSync(this.#fd, bytes);
    this.#size += bytes.length;
  }

  #rotate(): void {
    closeSync(this.#fd);
    const now = (this.#options.now ?? (() => new Date()))();
    renameSync(this.#options.path, backupName(this.#options.path, now));
    this.#fd = this.#open();
    this.#size = 0;
    this.#prune();
  }

  /** The rotated files of this log, oldest first (their names sort by time). */
  backups(): string[] {
    const ext = extname(this.#options.path);
    const stem = basename(this.#options.path, ext);
    const pattern = new RegExp(`^${stem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.\\d{3}${ext.replace('.', '\\.')}$`);
    const dir = dirname(this.#options.path);
    return readdirSync(dir)
      .filter((f) => pattern.test(f))
      .sort()
      .map((f) => join(dir, f));
  }

  #prune(): void {
    if (this.#options.maxBackups <= 0) return;
    const backups = this.backups();
    for (const old of backups.slice(0, Math.max(0, backups.length - this.#options.maxBackups))) rmSync(old, { force: true });
  }

  close(): void {
    closeSync(this.#fd);
  }
}

export interface AuditLogConfig {
  /** A file, or `-` for stdout. */
  path: string;
  /** --audit-log-maxsize, in megabytes (0: never rotate). */
  maxSizeMB: number;
  /** --audit-log-maxbackup (0: keep every rotated file). */
  maxBackups: number;
}

/** The sink a master's --audit-log-* flags ask for. */
export function openAuditSink(config: AuditLogConfig): AuditSink {
  if (config.path === '-') return stdoutAuditSink();
  return new RotatingFileSink({ path: config.path, maxBytes: config.maxSizeMB * 1024 * 1024, maxBackups: config.maxBackups });
}
