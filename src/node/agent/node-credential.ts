// The worker's identity: trades a join token for a node credential at the master, keeps it on disk, and reuses it on later starts.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../../core/client/api-client.js';
import { ConnectionError } from '../../core/client/client-errors.js';
import { abortableDelay } from '../../core/controller/informer.js';
import { ApiError, NotFoundError, UnauthorizedError } from '../../core/errors.js';
import { POD_CIDR_RANGE_FULL, type Taint } from '../../core/api/node.js';
import { StartupError } from '../../core/lifecycle/startup-error.js';
import { CaPinMismatchError, fetchPinnedCa, parsePinnedJoinToken } from '../../core/pki/join-token-pin.js';
import { createCsr } from '../../core/pki/pki.js';

/** What the master answered to a join; the file in the data dir holds the same. */
export interface NodeCredential {
  server: string;
  nodeName: string;
  /** Bearer token of user system:node:<nodeName>. */
  token: string;
  podCIDR: string;
  /** Port of the master's image registry, on the server's host; absent when the master runs none. */
  registryPort?: number;
  /** All pods' range (the master's --cluster-cidr); absent in credentials from masters that did not send it. */
  clusterCIDR?: string;
  /** The cluster CA (PEM) for an https server: checked against the join token's pin, trusted alone after. */
  ca?: string;
  /** The kubelet's serving certificate (the master signed it for the node's name) and its key. */
  kubeletCert?: string;
  kubeletKey?: string;
}

export interface ObtainCredentialOptions {
  server: string;
  nodeName: string;
  /** Needed for the first join, and again if the master has revoked the stored credential. */
  joinToken?: string;
  /** Worker state dir; the credential lives in DATA_DIR/kubelet/node-credential.json (0600), the node password in DATA_DIR/node-password (0600). */
  dataDir: string;
  /** Labels and taints the master gives the Node when this join creates it (the worker's --labels and --taints). */
  registration?: { labels: Record<string, string>; taints: Taint[] };
  signal: AbortSignal;
  log: (message: string) => void;
  /** First delay between attempts while the master cannot be reached (doubles to 10 s). */
  retryDelayMs?: number;
  /** The cluster CA when it is known without a pin (the master runs in this process). */
  caPem?: string;
}

export function credentialPath(dataDir: string): string {
  return join(dataDir, 'kubelet', 'node-credential.json');
}

/** The stored credential when it is for this server and node name; anything else (absent, torn, another cluster) is ignored. */
export function readStoredCredential(dataDir: string, server: string, nodeName: string): NodeCredential | undefined {
  let parsed: Partial<NodeCredential>;
  try {
    parsed = JSON.parse(readFileSync(credentialPath(dataDir), 'utf8')) as Partial<NodeCredential>;
  } catch {
    return undefined;
  }
  if (parsed.server !== server || parsed.nodeName !== nodeName || typeof parsed.token !== 'string' || typeof parsed.podCIDR !== 'string') return undefined;
  return parsed as NodeCredential;
}

function storeCredential(dataDir: string, credential: NodeCredential): void {
  const path = credentialPath(dataDir);
  mkdirSync(join(dataDir, 'kubelet'), { recursive: true, mode: 0o700 });
  // Write then rename, so a crash mid-write never leaves a torn credential behind.
  writeFileSync(`${path}.tmp`, `${JSON.stringify(credential, null, 2)}\n`, { mode: 0o600 });
  chmodSync(`${path}.tmp`, 0o600);
  renameSync(`${path}.tmp`, path);
}

export function nodePasswordPath(dataDir: string): string {
  return join(dataDir, 'node-password');
}

/**
 * This machine's node password (k3s'): 32 random bytes made at the first join and kept in the
 * data dir (0600). The master binds the node name to it, so that a join token alone cannot take
 * over a name that this machine holds; losing the file means an admin deletes the Node first.
 */
export function loadOrCreateNodePassword(dataDir: string): string {
  const path = nodePasswordPath(dataDir);
  try {
    const stored = readFileSync(path, 'utf8').trim();
    if (stored) return stored;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new StartupError(`cannot read the node password ${path}: ${(err as Error).message}`, { cause: err });
  }
  const password = randomBytes(32).toString('hex');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(`${path}.tmp`, `${password}\n`, { mode: 0o600 });
  chmodSync(`${path}.tmp`, 0o600);
  renameSync(`${path}.tmp`, path);
  return password;
}

interface JoinResponse {
  nodeName?: string;
  token?: string;
  podCIDR?: string;
  registryPort?: number;
  clusterCIDR?: string;
  kubeletCertificate?: string;
}

/**
 * The CA to trust for the join. Over https it must come from the token's pin (fetched with no
 * credential sent, and compared) or from the local master; a bare `id.secret` token is refused
 * there, as k3s refuses one without its insecure flag: nothing would tell this worker that the
 * server it is about to hand the secret to is the cluster's. Over plain http (a master run with
 * --insecure-http) there is nothing to check and the bare token is what the master prints.
 */
async function joinCa(options: ObtainCredentialOptions, pin: string | undefined): Promise<string | undefined> {
  const https = new URL(options.server).protocol === 'https:';
  if (!https) {
    if (pin) throw new StartupError(`the join token pins a CA but ${options.server} is plain http: use the master's https URL`);
    return undefined;
  }
  if (options.caPem) return options.caPem;
  if (!pin) {
    throw new StartupError(
      `the join token has no CA hash, so ${options.server} cannot be checked before the token is sent: use the K10<hash>::<id>.<secret> token the master printed (DATA_DIR/join-token)`,
    );
  }
  try {
    return await fetchPinnedCa(options.server, pin);
  } catch (err) {
    if (err instanceof CaPinMismatchError) throw new StartupError(err.message, { cause: err });
    throw new ConnectionError(`Unable to connect to the server: ${(err as Error).message}`, { cause: err });
  }
}

async function requestJoin(options: ObtainCredentialOptions): Promise<NodeCredential> {
  const parts = parsePinnedJoinToken(options.joinToken ?? '');
  const ca = await joinCa(options, parts.caHash);
  const client = new ApiClient({ server: options.server, token: parts.token, timeoutMs: 15_000, tls: { ca } });
  // Over TLS the kubelet asks for its serving certificate with the join; the master names the node in it.
  const csr = ca ? await createCsr({ commonName: `system:node:${options.nodeName}`, dnsNames: [options.nodeName] }) : undefined;
  try {
    const answer = (await client.request('POST', '/apis/minik8s.io/v1/join', {
      body: {
        apiVersion: 'minik8s.io/v1',
        kind: 'JoinRequest',
        nodeName: options.nodeName,
        nodePassword: loadOrCreateNodePassword(options.dataDir),
        ...(options.registration ? { labels: options.registration.labels, taints: options.registration.taints } : {}),
        ...(csr ? { csr: csr.csrPem } : {}),
      },
    })) as JoinResponse;
    if (!answer?.token || !answer.podCIDR) throw new StartupError(`the master at ${options.server} answered the join without a credential or pod CIDR`);
    return {
      server: options.server,
      nodeName: options.nodeName,
      token: answer.token,
      podCIDR: answer.podCIDR,
      ...(typeof answer.registryPort === 'number' ? { registryPort: answer.registryPort } : {}),
      ...(typeof answer.clusterCIDR === 'string' ? { clusterCIDR: answer.clusterCIDR } : {}),
      ...(ca ? { ca } : {}),
      ...(csr && typeof answer.kubeletCertificate === 'string' ? { kubeletCert: answer.kubeletCertificate, kubeletKey: csr.keyPem } : {}),
    };
  } catch (err) {
    if (err instanceof UnauthorizedError) {
      throw new StartupError(
        `the master at ${options.server} refused the join token: it is wrong, expired or revoked (make one with "minik8s token create" on the master)`,
        { cause: err },
      );
    }
    // Every pod range is taken: waiting will not help until an admin deletes nodes, so say so and stop.
    const full = err instanceof ApiError && err.details.causes?.some((c) => c.reason === POD_CIDR_RANGE_FULL);
    if (err instanceof ApiError && (err.code < 500 || full))
      throw new StartupError(`the master at ${options.server} refused to join node "${options.nodeName}": ${err.message}`, { cause: err });
    throw err;
  } finally {
    client.close();
  }
}

/** Whether the master still accepts the stored credential (a deleted node's is revoked). */
async function stillValid(credential: NodeCredential): Promise<boolean> {
  const client = new ApiClient({ server: credential.server, token: credential.token, timeoutMs: 15_000, tls: { ca: credential.ca } });
  try {
    await client.request('GET', `/api/v1/nodes/${encodeURIComponent(credential.nodeName)}`);
    return true;
  } catch (err) {
    if (err instanceof UnauthorizedError || err instanceof NotFoundError) return false;
    throw err;
  } finally {
    client.close();
  }
}

/**
 * Returns a working credential: the stored one while the master accepts it, else a new one
 * from a join. While the master cannot be reached (it may be starting too) it retries with
 * backoff until `signal` aborts; refusals are StartupErrors with a message for the operator.
 */
export async function obtainNodeCredential(options: ObtainCredentialOptions): Promise<NodeCredential> {
  let delay = options.retryDelayMs ?? 500;
  for (;;) {
    try {
      const stored = readStoredCredential(options.dataDir, options.server, options.nodeName);
      if (stored && (await stillValid(stored))) return stored;
      if (!options.joinToken) {
        throw new StartupError(
          stored
            ? `the master no longer accepts node "${options.nodeName}"'s credential; join again with --token JOIN_TOKEN`
            : `node "${options.nodeName}" has not joined ${options.server} yet: pass --token JOIN_TOKEN`,
        );
      }
      const credential = await requestJoin(options);
      storeCredential(options.dataDir, credential);
      options.log(`worker: node ${credential.nodeName} joined ${credential.server} with pod CIDR ${credential.podCIDR}`);
      return credential;
    } catch (err) {
      const retryable = err instanceof ConnectionError || (err instanceof ApiError && err.code >= 500);
      if (!retryable || options.signal.aborted) throw err;
      options.log(`worker: cannot reach the master yet (${err.message}); retrying in ${Math.round(delay / 100) / 10} s`);
      await abortableDelay(delay, options.signal);
      if (options.signal.aborted) throw new StartupError('stopped before the node could join');
      delay = Math.min(delay * 2, 10_000);
    }
  }
}
