// Table tests for sim-cluster's command line and the names of a simulated cluster's parts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseSimArgs, simClusterNames, SimUsageError } from './sim-cluster-args.js';

describe('parseSimArgs', () => {
  const ok: [string[], ReturnType<typeof parseSimArgs>][] = [
    [['up', '3'], { command: 'up', name: 'sim', count: 3, seedImages: true, masterArgs: [], workerArgs: [] }],
    [['up', '1', '--name', 't1a2'], { command: 'up', name: 't1a2', count: 1, seedImages: true, masterArgs: [], workerArgs: [] }],
    [
      ['up', '20', '--no-images', '--worker-arg=--overlay=vxlan', '--worker-arg=--labels=a=b', '--master-arg=--x'],
      { command: 'up', name: 'sim', count: 20, seedImages: false, masterArgs: ['--x'], workerArgs: ['--overlay=vxlan', '--labels=a=b'] },
    ],
    [['down'], { command: 'down', name: 'sim' }],
    [['down', '--name=abc'], { command: 'down', name: 'abc' }],
    [['status', '--name', 'abc'], { command: 'status', name: 'abc' }],
    [['env'], { command: 'env', name: 'sim' }],
    [['restart-master', '--name', 'abc'], { command: 'restart-master', name: 'abc' }],
    [[], { command: 'help' }],
    [['--help'], { command: 'help' }],
    [['up', '3', '-h'], { command: 'help' }],
  ];
  for (const [argv, want] of ok) {
    it(`reads ${JSON.stringify(argv)}`, () => assert.deepEqual(parseSimArgs(argv), want));
  }

  const bad: [string[], RegExp][] = [
    [['up'], /up N/],
    [['up', '0'], /1 to 20, not "0"/],
    [['up', '21'], /1 to 20/],
    [['up', '2x'], /not "2x"/],
    [['up', '2', '3'], /up N/],
    [['down', 'now'], /takes no arguments/],
    [['down', '--no-images'], /--no-images goes with up only/],
    [['start'], /unknown command "start"/],
    [['up', '2', '--name', 'Sim'], /lower-case/],
    [['up', '2', '--name', 'toolong8'], /1 to 7/],
    [['up', '2', '--name', '1abc'], /starting with a letter/],
    [['up', '2', '--nmae', 'x'], /Unknown option '--nmae'/],
  ];
  for (const [argv, message] of bad) {
    it(`refuses ${JSON.stringify(argv)}`, () =>
      assert.throws(
        () => parseSimArgs(argv),
        (err: Error) => err instanceof SimUsageError && message.test(err.message),
      ));
  }
});

describe('simClusterNames', () => {
  it("names the bridge, and each machine's node, netns and veth after the cluster", () => {
    assert.deepEqual(simClusterNames('sim', 2), {
      bridge: 'mk8s-sim',
      machines: [
        { name: 'sim-1', nodeName: 'sim-1', netns: 'mk8s-sim-1', veth: 'mk8s-sim-1' },
        { name: 'sim-2', nodeName: 'sim-2', netns: 'mk8s-sim-2', veth: 'mk8s-sim-2' },
      ],
    });
  });

  it('keeps every interface name within 15 characters at the longest name and the most machines', () => {
    const names = simClusterNames('abcdefg', 20);
    for (const n of [names.bridge, ...names.machines.map((m) => m.veth)]) assert.ok(n.length <= 15, n);
  });
});
