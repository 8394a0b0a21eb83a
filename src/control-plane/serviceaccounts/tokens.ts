// Bound service account tokens: ES256 JWTs signed by the cluster's service account key (DATA_DIR/pki/sa.key), issued and verified with jose.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';

/** What Kubernetes clusters made by kubeadm use for both: in-cluster clients know the API server by this name. */
export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
export const DEFAULT_AUDIENCE = DEFAULT_ISSUER;
/** TokenRequest's default and minimum lifetimes (Kubernetes: one hour, ten minutes). */
export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;
/** Kubernetes caps what a TokenRequest may ask for (--service-account-max-token-expiration unset: 2^32 s); 48 h is ample here. */
export const MAX_EXPIRATION_SECONDS = 48 * 3600;
const ALG = 'ES256';

/** The private claim Kubernetes puts in bound tokens. */
export interface KubernetesClaim {
  namespace: string;
  serviceaccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
  node?: { name: string; uid?: string };
  /** Our addition, beside Kubernetes' pod/secret/node bindings: the GpuJob a submitter's token is bound to. */
  gpujob?: { name: string; uid: string };
}

export interface IssueInput {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
  node?: { name: string; uid?: string };
  gpujob?: { name: string; uid: string };
  audiences?: readonly string[];
  expirationSeconds?: number;
}

export interface IssuedToken {
  token: string;
  /** RFC 3339, seconds precision, as TokenRequest's status.expirationTimestamp. */
  expirationTimestamp: string;
}

export interface VerifiedToken {
  subject: string;
  audiences: string[];
  claim: KubernetesClaim;
  expiresAt: Date;
}

export interface ServiceAccountTokensOptions {
  privateKey: KeyObject;
  issuer?: string;
  /** Audiences the API server accepts (--api-audiences); the first is the default for new tokens. */
  apiAudiences?: readonly string[];
  now?: () => Date;
}

/** The JWT's kid: a digest of the public key (as Kubernetes derives it), so a key rotation is visible in tokens. */
function keyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

/** The service account signing key, made at the first start and kept 0600 next to the CA; its PEM never leaves the master. */
export function loadOrCreateSigningKey(pkiDir: string): KeyObject {
  const path = join(pkiDir, 'sa.key');
  try {
    return createPrivateKey(readFileSync(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read the service account key ${path}: ${(err as Error).message}`);
  }
  mkdirSync(pkiDir, { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  // Written whole under another name and renamed, so a crash never leaves half a key that the next start would refuse.
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, pem, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return privateKey;
}

/** Why a token was refused; said in logs, never to the client (which sees 401 alone, as with Kubernetes). */
export class TokenRejected extends Error {}

/** A cheap look before any crypto: three base64url parts whose header says JWT. Admin and node tokens are not. */
export function looksLikeJwt(token: string): boolean {
  return /^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

export class ServiceAccountTokens {
  readonly issuer: string;
  readonly apiAudiences: readonly string[];
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  readonly #kid: string;
  readonly #now: () => Date;

  constructor(options: ServiceAccountTokensOptions) {
    this.#privateKey = options.privateKey;
    this.#publicKey = createPublicKey(options.privateKey);
    this.#kid = keyId(this.#publicKey);
    this.issuer = options.issuer ?? DEFAULT_ISSUER;
    this.apiAudiences = options.apiAudiences?.length ? [...options.apiAudiences] : [DEFAULT_AUDIENCE];
    this.#now = options.now ?? (() => new Date());
  }

  async issue(input: IssueInput): Promise<IssuedToken> {
    const seconds = input.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
    const iat = Math.floor(this.#now().getTime() / 1000);
    const exp = iat + seconds;
    const claim: KubernetesClaim = { namespace: input.namespace, serviceaccount: { ...input.serviceAccount } };
    if (input.pod) claim.pod = { ...input.pod };
    if (input.node) claim.node = { ...input.node };
    if (input.gpujob) claim.gpujob = { ...input.gpujob };
    const token = await new SignJWT({ 'kubernetes.io': claim })
      .setProtectedHeader({ alg: ALG, kid: this.#kid })
      .setIssuer(this.issuer)
      .setSubject(`system:serviceaccount:${input.namespace}:${input.serviceAccount.name}`)
      .setAudience(input.audiences?.length ? [...input.audiences] : [this.apiAudiences[0]!])
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.#privateKey);
    return { token, expirationTimestamp: new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }

  /**
   * Signature, issuer, time and audience (one of the API's); the objects the token is bound to
   * are the authenticator's to check. Throws TokenRejected with the reason.
   */
  async verify(token: string): Promise<VerifiedToken> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.#publicKey, {
        algorithms: [ALG],
        issuer: this.issuer,
        audience: [...this.apiAudiences],
        currentDate: this.#now(),
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new TokenRejected('token has expired');
      if (err instanceof joseErrors.JWTClaimValidationFailed) throw new TokenRejected(`token ${err.claim} is not valid: ${err.reason}`);
      if (err instanceof joseErrors.JOSEError) throw new TokenRejected(`token is not valid: ${err.code}`);
      throw err;
    }
    const claim = payload['kubernetes.io'] as KubernetesClaim | undefined;
    if (typeof claim?.namespace !== 'string' || typeof claim.serviceaccount?.name !== 'string' || typeof claim.serviceaccount.uid !== 'string') {
      throw new TokenRejected('token has no kubernetes.io service account claim');
    }
    if (payload.sub !== `system:serviceaccount:${claim.namespace}:${claim.serviceaccount.name}`)
      throw new TokenRejected('token subject does not match its claim');
    const aud = payload.aud;
    return {
      subject: payload.sub as string,
      audiences: Array.isArray(aud) ? (aud as string[]) : [String(aud)],
      claim,
      expiresAt: new Date((payload.exp as number) * 1000),
    };
  }
}
