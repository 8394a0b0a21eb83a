#!/usr/bin/env node
// The one executable: `--role=...` (or `master`/`worker` first) runs the daemon, anything else a CLI command.

const argv = process.argv.slice(2);

/**
 * Daemon invocations, recognised without parsing so the CLI path loads nothing it does not need.
 * `--config FILE` is the daemon's too (the file may name the role); the CLI has no such flag.
 */
function isDaemonInvocation(args: readonly string[]): boolean {
  return (
    args[0] === 'master' || args[0] === 'worker' || args.some((a) => a === '--role' || a.startsWith('--role=') || a === '--config' || a.startsWith('--config='))
  );
}

async function runDaemonProcess(args: string[]): Promise<number> {
  const controller = new AbortController();
  // Signals are handled here and nowhere else: the first asks for a clean shutdown, a second forces exit.
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(signal === 'SIGINT' ? 130 : 143);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const { runDaemon } = await import('../src/daemon/daemon.js');
  return runDaemon(args, controller.signal);
}

async function main(): Promise<number> {
  if (isDaemonInvocation(argv)) return runDaemonProcess(argv);
  const { runCli } = await import('../src/cli/main.js');
  return runCli(argv);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Last resort (runCli never throws; a daemon import might): still no stack trace unless asked for.
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.MINIK8S_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.exitCode = 1;
  },
);
