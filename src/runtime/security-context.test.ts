// Table tests of the security-context merge (pod x container x image user -> ids), runAsNonRoot, Docker's security options and sysctl admission.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, Pod } from '../core/api/pod.js';
import { appContainerCreateOptions, sandboxCreateOptions } from './docker-container-config.js';
import {
  checkRunAsNonRoot,
  dockerCapability,
  dockerSecurityOptions,
  effectiveIdentity,
  forbiddenSysctl,
  formatIdentity,
  parseIdentity,
  USER_LABEL,
  type ImageUser,
} from './security-context.js';

type PodSC = NonNullable<Pod['spec']['securityContext']>;
type ContainerSC = NonNullable<Container['securityContext']>;

function podWith(podSC: PodSC | undefined, containerSC?: ContainerSC, extra: Partial<Pod['spec']> = {}): { pod: Pod; container: Container } {
  const container = { name: 'app', image: 'busybox', ...(containerSC ? { securityContext: containerSC } : {}) } as Container;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'ns', uid: 'u-1' },
    spec: { containers: [container], ...(podSC ? { securityContext: podSC } : {}), ...extra },
    status: {},
  } as unknown as Pod;
  return { pod, container };
}

const PASSWD = 'root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\napp:x:1000:1000::/home/app:/bin/sh\n';
const GROUP = 'root:x:0:\ndaemon:x:1:\nextra:x:4242:daemon,app\nvideo:x:44:app\napp:x:1000:\n';
const FILES: ImageUser = { passwd: PASSWD, group: GROUP };

describe('effectiveIdentity', () => {
  const cases: [string, PodSC | undefined, ContainerSC | undefined, ImageUser, [number, number, number[]]][] = [
    ['nothing set, image runs as root', undefined, undefined, { ...FILES, user: '' }, [0, 0, [0]]],
    ['image USER by name: its uid, primary group and memberships', undefined, undefined, { ...FILES, user: 'app' }, [1000, 1000, [1000, 44, 4242]]],
    ['image USER uid:gid', undefined, undefined, { ...FILES, user: '1000:44' }, [1000, 44, [44, 4242]]],
    ['pod runAsUser over the image, primary group from passwd', { runAsUser: 1 }, undefined, { ...FILES, user: 'app' }, [1, 1, [1, 4242]]],
    ['pod runAsUser and runAsGroup', { runAsUser: 1000, runAsGroup: 3000 }, undefined, FILES, [1000, 3000, [3000, 44, 4242]]],
    ['uid unknown to the image: gid 0, no image groups', { runAsUser: 5000 }, undefined, FILES, [5000, 0, [0]]],
    ['container runAsUser wins over the pod', { runAsUser: 1000, runAsGroup: 3000 }, { runAsUser: 2000 }, FILES, [2000, 3000, [3000]]],
    ['container runAsGroup wins over the pod', { runAsUser: 1000, runAsGroup: 3000 }, { runAsGroup: 4000 }, FILES, [1000, 4000, [4000, 44, 4242]]],
    [
      'fsGroup and supplementalGroups added, Merge by default',
      { runAsUser: 1, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [5000, 3000] },
      undefined,
      FILES,
      [1, 3000, [3000, 2000, 4242, 5000]],
    ],
    [
      'Strict: only runAsGroup, fsGroup and supplementalGroups',
      { runAsUser: 1, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [5000], supplementalGroupsPolicy: 'Strict' },
      undefined,
      FILES,
      [1, 3000, [3000, 2000, 5000]],
    ],
    ['Strict with the image user by name', { supplementalGroupsPolicy: 'Strict' }, undefined, { ...FILES, user: 'app' }, [1000, 1000, [1000]]],
    ['no account files: numeric image user as it is', undefined, undefined, { user: '65532' }, [65532, 0, [0]]],
  ];
  for (const [name, podSC, containerSC, image, [uid, gid, groups]] of cases) {
    it(name, () => {
      const { pod, container } = podWith(podSC, containerSC);
      assert.deepEqual(effectiveIdentity(pod, container, image), { uid, gid, supplementalGroups: groups });
    });
  }

  it('an image user name the image does not know is a config error, as the runtime says it', () => {
    const { pod, container } = podWith(undefined);
    assert.throws(() => effectiveIdentity(pod, container, { user: 'ghost', passwd: PASSWD }), /unable to find user ghost: no matching entries in passwd file/);
  });

  it('the container override applies to that container only', () => {
    const { pod } = podWith({ runAsUser: 1000 });
    const a = { name: 'a', image: 'busybox', securityContext: { runAsUser: 7 } } as Container;
    const b = { name: 'b', image: 'busybox' } as Container;
    assert.equal(effectiveIdentity(pod, a, FILES).uid, 7);
    assert.equal(effectiveIdentity(pod, b, FILES).uid, 1000);
  });
});

describe('checkRunAsNonRoot', () => {
  const where = '(pod: "web_ns(u-1)", container: app)';
  const cases: [string, PodSC | undefined, ContainerSC | undefined, string, string | undefined][] = [
    ['not asked: root is fine', undefined, undefined, '', undefined],
    ['image with no USER runs as root', { runAsNonRoot: true }, undefined, '', `container has runAsNonRoot and image will run as root ${where}`],
    ['image USER 0', { runAsNonRoot: true }, undefined, '0:0', `container has runAsNonRoot and image will run as root ${where}`],
    [
      'image USER by name cannot be verified',
      { runAsNonRoot: true },
      undefined,
      'root',
      `container has runAsNonRoot and image has non-numeric user (root), cannot verify user is non-root ${where}`,
    ],
    ['image USER numeric non-zero', { runAsNonRoot: true }, undefined, '1000', undefined],
    ['runAsUser non-zero over a root image', { runAsNonRoot: true, runAsUser: 1000 }, undefined, '', undefined],
    ['explicit runAsUser 0', undefined, { runAsNonRoot: true, runAsUser: 0 }, '1000', `container's runAsUser breaks non-root policy ${where}`],
    ['the container may turn it off', { runAsNonRoot: true }, { runAsNonRoot: false }, '', undefined],
  ];
  for (const [name, podSC, containerSC, imageUser, message] of cases) {
    it(name, () => {
      const { pod, container } = podWith(podSC, containerSC);
      if (message === undefined) assert.doesNotThrow(() => checkRunAsNonRoot(pod, container, imageUser));
      else assert.throws(() => checkRunAsNonRoot(pod, container, imageUser), { message });
    });
  }
});

describe('Docker security options', () => {
  it('capability names with or without CAP_, any case; ALL stays', () => {
    assert.deepEqual(['chown', 'CAP_NET_ADMIN', 'NET_RAW', 'all'].map(dockerCapability), ['CAP_CHOWN', 'CAP_NET_ADMIN', 'CAP_NET_RAW', 'ALL']);
  });

  const cases: [string, PodSC | undefined, ContainerSC, ReturnType<typeof dockerSecurityOptions>][] = [
    ['nothing', undefined, {}, {}],
    ['privileged and read-only root', undefined, { privileged: true, readOnlyRootFilesystem: true }, { Privileged: true, ReadonlyRootfs: true }],
    ['capabilities', undefined, { capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] } }, { CapAdd: ['CAP_NET_ADMIN'], CapDrop: ['ALL'] }],
    ['no privilege escalation', undefined, { allowPrivilegeEscalation: false }, { SecurityOpt: ['no-new-privileges'] }],
    ['RuntimeDefault is Docker default profile', undefined, { seccompProfile: { type: 'RuntimeDefault' } }, {}],
    ['pod Unconfined seccomp', { seccompProfile: { type: 'Unconfined' } }, {}, { SecurityOpt: ['seccomp=unconfined'] }],
    ['container seccomp wins over the pod', { seccompProfile: { type: 'Unconfined' } }, { seccompProfile: { type: 'RuntimeDefault' } }, {}],
    ['Localhost profile content', undefined, { seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' } }, { SecurityOpt: ['seccomp={"p.json":1}'] }],
    ['procMount Unmasked', undefined, { procMount: 'Unmasked' }, { SecurityOpt: ['systempaths=unconfined'] }],
  ];
  for (const [name, podSC, containerSC, want] of cases) {
    it(name, () => {
      const { pod, container } = podWith(podSC, containerSC);
      assert.deepEqual(
        dockerSecurityOptions(pod, container, (p) => JSON.stringify({ [p]: 1 })),
        want,
      );
    });
  }

  it('the create body: uid:gid always, the other groups as GroupAdd, the ids in a label', () => {
    const { pod, container } = podWith({ runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000 }, { capabilities: { drop: ['CHOWN'] } });
    const o = appContainerCreateOptions({
      pod,
      container,
      attempt: 0,
      nodeName: 'n1',
      sandboxID: 'sbx',
      image: 'R/busybox',
      imageConfig: { User: '' },
      imageFiles: FILES,
      volumes: [],
    });
    assert.equal(o.User, '1000:3000');
    assert.deepEqual(o.HostConfig.GroupAdd, ['44', '2000', '4242']);
    assert.deepEqual(o.HostConfig.CapDrop, ['CAP_CHOWN']);
    assert.deepEqual(parseIdentity(o.Labels[USER_LABEL]), { uid: 1000, gid: 3000, supplementalGroups: [3000, 44, 2000, 4242] });
  });

  it('the create body refuses a root image under runAsNonRoot', () => {
    const { pod, container } = podWith({ runAsNonRoot: true });
    assert.throws(
      () => appContainerCreateOptions({ pod, container, attempt: 0, nodeName: 'n1', sandboxID: 's', image: 'R/b', imageConfig: { User: 'root' }, volumes: [] }),
      /image has non-numeric user \(root\)/,
    );
  });

  it('identity labels round-trip', () => {
    const id = { uid: 1, gid: 2, supplementalGroups: [2, 3] };
    assert.deepEqual(parseIdentity(formatIdentity(id)), id);
    assert.equal(parseIdentity('x'), undefined);
  });
});

describe('sysctls', () => {
  const cases: [string, { name: string; value: string }[], Partial<Pod['spec']>, string[], string | undefined][] = [
    [
      'safe set',
      [
        { name: 'net.ipv4.ip_local_port_range', value: '1024 65535' },
        { name: 'kernel.shm_rmid_forced', value: '1' },
      ],
      {},
      [],
      undefined,
    ],
    ['slashed names', [{ name: 'net/ipv4/tcp_syncookies', value: '1' }], {}, [], undefined],
    ['unsafe', [{ name: 'kernel.msgmax', value: '65536' }], {}, [], 'forbidden sysctl: "kernel.msgmax" not allowlisted'],
    ['unsafe allowed by the node', [{ name: 'kernel.msgmax', value: '65536' }], {}, ['kernel.msg*'], undefined],
    [
      'net with host network',
      [{ name: 'net.ipv4.tcp_syncookies', value: '1' }],
      { hostNetwork: true },
      [],
      'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled',
    ],
  ];
  for (const [name, sysctls, extra, allow, want] of cases) {
    it(name, () => {
      const { pod } = podWith({ sysctls }, undefined, extra);
      assert.equal(forbiddenSysctl(pod, allow), want);
    });
  }

  it('set on the sandbox, with dotted names', () => {
    const { pod } = podWith({ sysctls: [{ name: 'net/ipv4/tcp_syncookies', value: '1' }] });
    const o = sandboxCreateOptions({ pod, nodeName: 'n1', image: 'pause', network: 'net' });
    assert.deepEqual(o.HostConfig.Sysctls, { 'net.ipv4.tcp_syncookies': '1' });
  });
});
