// Unit tests for hairpin mode: only ports of the pod bridge that have it off are changed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NetCommandError, type NetCommand } from './net-command.js';
import { ensureHairpin, hairpinCommands } from './bridge-hairpin.js';

const ports = [
  { ifname: 'veth1', master: 'minik8s0', hairpin: false },
  { ifname: 'veth2', master: 'minik8s0', hairpin: true },
  { ifname: 'veth3', master: 'docker0', hairpin: false },
  { ifname: 'veth4', master: 'minik8s0', hairpin: false },
];

describe('hairpinCommands', () => {
  it("turns hairpin on for the pod bridge's ports that have it off, and nothing else", () => {
    assert.deepEqual(
      hairpinCommands(ports, 'minik8s0').map((c) => `${c.tool} ${c.args.join(' ')}`),
      ['bridge link set dev veth1 hairpin on', 'bridge link set dev veth4 hairpin on'],
    );
    assert.deepEqual(hairpinCommands([], 'minik8s0'), []);
  });

  it('skips a port that vanished meanwhile', async () => {
    const run = async (c: NetCommand) => {
      if (c.args[0] === '-d') return JSON.stringify(ports);
      if (c.args[3] === 'veth1') throw new NetCommandError(c, 'Cannot find device "veth1"');
      return '';
    };
    assert.deepEqual(await ensureHairpin(run, 'minik8s0'), ['veth4']);
  });
});
