// The cluster CA and the certificates it issues (ECDSA P-256, via @peculiar/x509 over WebCrypto).
//
// Stable API (other components build on it; keep these signatures):
//   loadOrCreateCa({ dir })                -> ClusterCa   DIR/ca.crt (0644) + DIR/ca.key (0600)
//   caHash(certPem)                        -> hex sha256 of the CA cert's DER (k3s/kubeadm pin)
//   issueServerCert(ca, { commonName, dnsNames, ipAddresses })       -> KeyPairPem
//   issueClientCert(ca, { user, groups })  -> KeyPairPem  (CN = user, O = groups, as Kubernetes reads them)
//   loadOrIssueCert(ca, { dir, name, ...profile }) -> KeyPairPem, reusing DIR/NAME.crt/.key when they
//                                             still match (same CA, same SANs/subject, not near expiry)
//   createCsr({ commonName, dnsNames, ipAddresses }) -> { csrPem, keyPem }; signCsr(ca, csrPem, profile)
//   writePemFile(path, text, mode)         -> atomic write with the given mode
//   certificateInfo(certPem)               -> subject CN/O, SANs, validity, fingerprint (for checks)
import { createHash, webcrypto } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
// @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

// Node 20 has WebCrypto as node:crypto's webcrypto; hand it to the library explicitly rather than
// relying on globalThis detection.
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The CA lives ten years (kubeadm's choice); leaf certificates one year, remade at a start within 30 days of expiry. */
export const CA_VALID_DAYS = 3650;
export const LEAF_VALID_DAYS = 365;
const RENEW_BEFORE_MS = 30 * DAY_MS;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface ClusterCa extends KeyPairPem {
  /** The CA's certificate, parsed. */
  cert: x509.X509Certificate;
  /** Its private key, usable for signing. */
  key: CryptoKey;
  /** hex sha256 of the certificate's DER: what join tokens pin. */
  hash: string;
  certPath: string;
  keyPath: string;
}

/** What a leaf certificate says: server certs name SANs, client certs a user and groups. */
export interface CertProfile {
  commonName: string;
  /** Subject O entries (Kubernetes' groups for client certs). */
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  /** serverAuth, clientAuth or both. */
  usages: readonly ('server' | 'client')[];
  validDays?: number;
  /** A lifetime in seconds, ahead of validDays (a CertificateSigningRequest's expirationSeconds). */
  validSeconds?: number;
}

export interface ServerCertOptions {
  commonName: string;
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  /** Also usable as a client certificate (etcd peers and kubelets that dial out want both). */
  client?: boolean;
  validDays?: number;
}

export interface ClientCertOptions {
  user: string;
  groups?: readonly string[];
  validDays?: number;
}

/** Writes a file atomically (temp file + rename) with the given mode, making its directory. */
export function writePemFile(path: string, text: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  // writeFileSync's mode is masked by the umask and ignored for an existing file: set it outright.
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

function pemBody(pem: string, label: string): Buffer {
  const m = new RegExp(`-----BEGIN ${label}-----([^-]+)-----END ${label}-----`).exec(pem);
  if (!m) throw new Error(`no ${label} PEM block found`);
  return Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
}

function toPem(der: ArrayBuffer | Uint8Array, label: string): string {
  const b64 = (der instanceof Uint8Array ? Buffer.from(der.buffer, der.byteOffset, der.byteLength) : Buffer.from(der)).toString('base64');
  return `-----BEGIN ${label}-----\n${b64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function exportKeyPem(key: CryptoKey): Promise<string> {
  return toPem(await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey), 'PRIVATE KEY');
}

async function importKeyPem(pem: string): Promise<CryptoKey> {
  return (await webcrypto.subtle.importKey('pkcs8', pemBody(pem, 'PRIVATE KEY'), KEY_ALGORITHM, true, ['sign'])) as CryptoKey;
}

/** hex sha256 of a certificate's DER encoding (the form k3s and kubeadm pin a CA by). */
export function caHash(certPem: string): string {
  return createHash('sha256').update(pemBody(certPem, 'CERTIFICATE')).digest('hex');
}

function randomSerial(): string {
  // 16 random bytes with the top bit cleared, so the DER integer stays positive.
  const b = Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)));
  b[0] &= 0x7f;
  return b.toString('hex');
}

/**
 * Loads the CA from DIR/ca.crt and DIR/ca.key, or makes one there (key 0600) when neither exists.
 * One file without the other is an error: regenerating would silently orphan every issued cert.
 */
export async function loadOrCreateCa(options: { dir: string; commonName?: string }): Promise<ClusterCa> {
  const certPath = join(options.dir, 'ca.crt');
  const keyPath = join(options.dir, 'ca.key');
  let certPem: string | undefined;
  let keyPem: string | undefined;
  try {
    certPem = readFileSync(certPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    keyPem = readFileSync(keyPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (certPem !== undefined && keyPem !== undefined) {
    const cert = new x509.X509Certificate(certPem);
    return { cert, certPem, keyPem, key: await importKeyPem(keyPem), hash: caHash(certPem), certPath, keyPath };
  }
  if (certPem !== undefined || keyPem !== undefined) {
    throw new Error(`incomplete cluster CA in ${options.dir}: need both ca.crt and ca.key (or neither, to make one)`);
  }
  const keys = await generateKeys();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: [{ CN: [options.commonName ?? `minik8s-ca@${Math.floor(now / 1000)}`] }],
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + CA_VALID_DAYS * DAY_MS),
    signingAlgorithm: SIGNING_ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  certPem = cert.toString('pem');
  keyPem = await exportKeyPem(keys.privateKey);
  // Key first: a crash between the two writes leaves a key without a cert, which we refuse above
  // rather than hand out a CA whose key is lost.
  writePemFile(keyPath, keyPem, 0o600);
  writePemFile(certPath, `${certPem}\n`, 0o644);
  return { cert, certPem: `${certPem}\n`, keyPem, key: keys.privateKey, hash: caHash(certPem), certPath, keyPath };
}

function leafExtensions(profile: CertProfile): x509.Extension[] {
  const ext: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(profile.usages.map((u) => (u === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth))),
  ];
  const names: x509.JsonGeneralName[] = [
    ...(profile.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(profile.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  if (names.length > 0) ext.push(new x509.SubjectAlternativeNameExtension(names));
  return ext;
}

function subjectName(profile: CertProfile): x509.JsonName {
  const name: x509.JsonName = [{ CN: [profile.commonName] }];
  for (const o of profile.organizations ?? []) name.push({ O: [o] });
  return name;
}

async function issue(ca: ClusterCa, profile: CertProfile, publicKey: CryptoKey | x509.PublicKey): Promise<string> {
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: subjectName(profile),
    issuer: ca.cert.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + (profile.validSeconds !== undefined ? profile.validSeconds * 1000 : (profile.validDays ?? LEAF_VALID_DAYS) * DAY_MS)),
    signingAlgorithm: SIGNING_ALGORITHM,
    publicKey,
    signingKey: ca.key,
    extensions: [...leafExtensions(profile), await x509.AuthorityKeyIdentifierExtension.create(ca.cert)],
  });
  return `${cert.toString('pem')}\n`;
}

/** Issues a key and certificate for a profile, signed by the CA. */
export async function issueCert(ca: ClusterCa, profile: CertProfile): Promise<KeyPairPem> {
  const keys = await generateKeys();
  return { certPem: await issue(ca, profile, keys.publicKey), keyPem: await exportKeyPem(keys.privateKey) };
}

export function serverProfile(options: ServerCertOptions): CertProfile {
  return {
    commonName: options.commonName,
    dnsNames: options.dnsNames,
    ipAddresses: options.ipAddresses,
    usages: options.client ? ['server', 'client'] : ['server'],
    validDays: options.validDays,
  };
}

export function clientProfile(options: ClientCertOptions): CertProfile {
  return {
    commonName: options.user,
    organizations: options.groups,
    usages: ['client'],
    validDays: options.validDays,
  };
}

/** A serving certificate naming DNS and IP SANs. */
export function issueServerCert(ca: ClusterCa, options: ServerCertOptions): Promise<KeyPairPem> {
  return issueCert(ca, serverProfile(options));
}

/** A client certificate: CN = user, one O per group (Kubernetes' x509 authenticator reads them so). */
export function issueClientCert(ca: ClusterCa, options: ClientCertOptions): Promise<KeyPairPem> {
  return issueCert(ca, clientProfile(options));
}

export interface CertificateInfo {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  notBefore: Date;
  notAfter: Date;
  issuer: string;
  /** hex sha256 of the DER. */
  fingerprint: string;
}

export function certificateInfo(certPem: string): CertificateInfo {
  const cert = new x509.X509Certificate(certPem);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const json = san?.names.toJSON() ?? [];
  return {
    commonName: cert.subjectName.getField('CN')[0] ?? '',
    organizations: cert.subjectName.getField('O'),
    dnsNames: json.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: json.filter((n) => n.type === 'ip').map((n) => n.value),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    issuer: cert.issuer,
    fingerprint: caHash(certPem),
  };
}

/** Whether a certificate was signed by this CA (signature checked, not only the issuer name). */
export async function signedBy(ca: ClusterCa, certPem: string): Promise<boolean> {
  try {
    const cert = new x509.X509Certificate(certPem);
    return await cert.verify({ publicKey: ca.cert.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

function sameSet(a: readonly string[] | undefined, b: readonly string[]): boolean {
  const x = [...new Set(a ?? [])].sort();
  const y = [...new Set(b)].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/**
 * Returns DIR/NAME.crt and DIR/NAME.key when they were issued by this CA for the same subject
 * and SANs and are not within 30 days of expiry; otherwise issues new ones and writes them
 * (key 0600, cert 0644). This is how a serving certificate follows a machine's changed addresses.
 */
export async function loadOrIssueCert(
  ca: ClusterCa,
  options: { dir: string; name: string } & CertProfile,
): Promise<KeyPairPem & { certPath: string; keyPath: string; issued: boolean; replaced: boolean }> {
  const certPath = join(options.dir, `${options.name}.crt`);
  const keyPath = join(options.dir, `${options.name}.key`);
  let replaced = false;
  try {
    const certPem = readFileSync(certPath, 'utf8');
    const keyPem = readFileSync(keyPath, 'utf8');
    const info = certificateInfo(certPem);
    const fresh =
      info.notAfter.getTime() - Date.now() > RENEW_BEFORE_MS &&
      info.commonName === options.commonName &&
      sameSet(options.organizations, info.organizations) &&
      sameSet(options.dnsNames, info.dnsNames) &&
      sameSet(options.ipAddresses, info.ipAddresses) &&
      (await signedBy(ca, certPem));
    if (fresh) return { certPem, keyPem, certPath, keyPath, issued: false, replaced: false };
    replaced = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      // An unreadable or corrupt file is replaced, like an outdated one.
    }
  }
  const pair = await issueCert(ca, options);
  writePemFile(keyPath, pair.keyPem, 0o600);
  writePemFile(certPath, pair.certPem, 0o644);
  return { ...pair, certPath, keyPath, issued: true, replaced };
}

/** A key and a PKCS#10 request for it (a kubelet asks the master to sign its serving cert so). */
export async function createCsr(options: {
  commonName: string;
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
}): Promise<{ csrPem: string; keyPem: string }> {
  const keys = await generateKeys();
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subjectName({ commonName: options.commonName, organizations: options.organizations, usages: [] }),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: leafExtensions({ ...options, usages: [] }).filter((e) => e instanceof x509.SubjectAlternativeNameExtension),
  });
  return { csrPem: `${csr.toString('pem')}\n`, keyPem: await exportKeyPem(keys.privateKey) };
}

/**
 * Signs a CSR's public key with the given profile. The requester's own subject and SANs are
 * ignored: the signer decides what the certificate names (a node may not ask for another's name).
 */
export async function signCsr(ca: ClusterCa, csrPem: string, profile: CertProfile): Promise<string> {
  const csr = new x509.Pkcs10CertificateRequest(csrPem);
  if (!(await csr.verify())) throw new Error('certificate signing request has a bad signature');
  return issue(ca, profile, csr.publicKey);
}

/** What a PKCS#10 request asks for: its subject's CN and O entries, and whether its signature holds (it proves the key). */
export async function readCsr(csrPem: string): Promise<{ commonName: string; organizations: string[]; signatureValid: boolean }> {
  const csr = new x509.Pkcs10CertificateRequest(csrPem);
  return {
    commonName: csr.subjectName.getField('CN')[0] ?? '',
    organizations: csr.subjectName.getField('O'),
    signatureValid: await csr.verify(),
  };
}

/** PEM text of a certificate's DER (e.g. a peer certificate from tls.TLSSocket#getPeerCertificate). */
export function derToPem(der: Buffer | Uint8Array): string {
  return toPem(der, 'CERTIFICATE');
}
