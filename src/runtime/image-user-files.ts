// Reads an image's /etc/passwd and /etc/group (through a created, never started container), for user names and the groups supplementalGroupsPolicy Merge adds.
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { extract } from 'tar-stream';

export interface ImageFiles {
  passwd?: string;
  group?: string;
}

/** Files this size or larger are not account databases: the read stops there rather than fill memory. */
const MAX_BYTES = 1 << 20;

/** The first regular file of a tar stream, as text; undefined when the archive has none. */
export async function firstFileOfTar(stream: Readable): Promise<string | undefined> {
  const ex = extract();
  let text: string | undefined;
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, body, next) => {
      const chunks: Buffer[] = [];
      let size = 0;
      body.on('data', (data: unknown) => {
        const c = data as Buffer;
        size += c.length;
        if (size <= MAX_BYTES) chunks.push(c);
      });
      body.on('end', () => {
        if (text === undefined && header.type === 'file' && size <= MAX_BYTES) text = Buffer.concat(chunks).toString('utf8');
        next();
      });
      body.resume();
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  stream.pipe(ex);
  await done;
  return text;
}

/** A file of a container's filesystem, or undefined when it is not there (distroless images have no /etc/passwd). */
async function readFile(container: Docker.Container, path: string): Promise<string | undefined> {
  let stream: NodeJS.ReadableStream;
  try {
    stream = await container.getArchive({ path });
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw err;
  }
  return firstFileOfTar(stream as Readable);
}

/**
 * The image's account files. A container is created (not started: nothing of the image runs) so Docker resolves
 * the image's layers and symlinks for us, then removed.
 */
export async function readImageUserFiles(docker: Docker, image: string): Promise<ImageFiles> {
  const container = await docker.createContainer({
    name: `minik8s-image-users-${randomBytes(6).toString('hex')}`,
    Image: image,
    // Never started; a command is given only because Docker refuses to create a container of an image without one.
    Entrypoint: ['/minik8s-never-started'],
    Labels: { 'minik8s.io/purpose': 'image-user-files' },
    HostConfig: { NetworkMode: 'none' },
  });
  try {
    const [passwd, group] = await Promise.all([readFile(container, '/etc/passwd'), readFile(container, '/etc/group')]);
    return { ...(passwd !== undefined ? { passwd } : {}), ...(group !== undefined ? { group } : {}) };
  } finally {
    await container.remove({ force: true }).catch(() => {});
  }
}
