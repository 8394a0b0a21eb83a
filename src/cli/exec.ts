// `minik8s exec POD [-c C] [-i] [-t] -- CMD ARGS...`: runs a command in a container over a WebSocket stream (as kubectl does), exits with its code.
import { StringDecoder } from 'node:string_decoder';
import type { ReadStream } from 'node:tty';
import type WebSocket from 'ws';
import {
  decodeFrame,
  EXEC_PROTOCOLS,
  ERROR_CHANNEL,
  encodeClose,
  encodeFrame,
  encodeResize,
  outcomeOfStatus,
  STDERR_CHANNEL,
  STDIN_CHANNEL,
  STDOUT_CHANNEL,
  V5_CHANNEL_PROTOCOL,
} from '../core/api/channel-protocol.js';
import { podKind } from '../core/api/pod.js';
import { kindObjectPath } from '../core/client/api-client.js';
import { ApiError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { containerFor, podName } from './logs.js';
import { openStream } from './stream-socket.js';

export interface ExecArgs {
  pod?: string;
  container?: string;
  /** Send the CLI's stdin to the command as it is typed or piped. */
  stdin?: boolean;
  /** A terminal for the command: raw mode on ours when stdin is one, resized with the window. */
  tty?: boolean;
  command: string[];
}

interface ExecResult {
  exitCode?: number;
  stdout?: string;
  stderr?: string;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** kubectl's words for a failing command; the process exits with the command's own code. */
function finish(ctx: CliContext, code: number): number {
  if (code !== 0) ctx.err(`command terminated with exit code ${code}\n`);
  return code;
}

export async function runExec(ctx: CliContext, args: ExecArgs): Promise<number> {
  const name = podName(args.pod, 'exec');
  if (args.command.length === 0) throw new CliError('you must specify at least one command for the container');
  const container = await containerFor(ctx, name, args.container);
  const terminal = (ctx.stdin as Partial<ReadStream>).isTTY === true;
  if (args.tty && !terminal && !args.stdin) ctx.err('Unable to use a TTY - input is not a terminal or the right kind of file\n');
  const tty = Boolean(args.tty && (terminal || args.stdin));
  const query = new URLSearchParams();
  for (const word of args.command) query.append('command', word);
  query.set('container', container);
  query.set('stdout', 'true');
  if (!tty) query.set('stderr', 'true');
  if (args.stdin) query.set('stdin', 'true');
  if (tty) query.set('tty', 'true');
  const path = `${kindObjectPath(podKind, name, ctx.namespace)}/exec`;
  let ws: WebSocket;
  try {
    ws = await openStream(ctx, path, query, EXEC_PROTOCOLS);
  } catch (err) {
    // A server without the stream routes (404/405): its one-shot exec, stdin read to its end first.
    if (!tty && err instanceof ApiError && (err.code === 404 || err.code === 405)) return oneShot(ctx, args, path, container);
    throw err;
  }
  return finish(ctx, await pump(ctx, ws, { stdin: Boolean(args.stdin), tty, raw: tty && terminal }));
}

/** The pre-stream exec: one POST, the output in the answer. */
async function oneShot(ctx: CliContext, args: ExecArgs, path: string, container: string): Promise<number> {
  const stdin = args.stdin ? await readAll(ctx.stdin) : undefined;
  const result = (await ctx.client().request('POST', path, {
    query: { container },
    body: { command: args.command, ...(stdin !== undefined ? { stdin } : {}) },
    signal: ctx.signal,
  })) as ExecResult;
  if (result.stdout) ctx.out(result.stdout);
  if (result.stderr) ctx.err(result.stderr);
  return finish(ctx, typeof result.exitCode === 'number' ? result.exitCode : 1);
}

/** Relays stdin, output and resizes until the server closes the stream; resolves with the exit code. */
function pump(ctx: CliContext, ws: WebSocket, o: { stdin: boolean; tty: boolean; raw: boolean }): Promise<number> {
  return new Promise((resolve, reject) => {
    const decoders = { [STDOUT_CHANNEL]: new StringDecoder('utf8'), [STDERR_CHANNEL]: new StringDecoder('utf8') };
    let outcome: ReturnType<typeof outcomeOfStatus> | undefined;
    const input = ctx.stdin as NodeJS.ReadableStream & Partial<ReadStream>;
    const onData = (chunk: Buffer | string) => {
      if (ws.readyState === ws.OPEN) ws.send(encodeFrame(STDIN_CHANNEL, typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    };
    // v5 can say "no more input"; with v4 the command sees its stdin end only when the stream closes.
    const onEnd = () => {
      if (ws.readyState === ws.OPEN && ws.protocol === V5_CHANNEL_PROTOCOL) ws.send(encodeClose(STDIN_CHANNEL));
    };
    const sendSize = () => {
      const columns = process.stdout.columns;
      const rows = process.stdout.rows;
      if (columns && rows && ws.readyState === ws.OPEN) ws.send(encodeResize({ Width: columns, Height: rows }));
    };
    if (o.raw) input.setRawMode?.(true);
    if (o.tty) {
      sendSize();
      process.on('SIGWINCH', sendSize);
    }
    if (o.stdin) {
      input.on('data', onData);
      input.on('end', onEnd);
      input.resume();
    }
    const cleanup = () => {
      if (o.raw) input.setRawMode?.(false);
      process.off('SIGWINCH', sendSize);
      input.off('data', onData);
      input.off('end', onEnd);
      input.pause();
    };
    ws.on('message', (message: Buffer) => {
      const frame = decodeFrame(message);
      if (!frame) return;
      if (frame.channel === STDOUT_CHANNEL) ctx.out(decoders[STDOUT_CHANNEL].write(frame.data));
      else if (frame.channel === STDERR_CHANNEL) ctx.err(decoders[STDERR_CHANNEL].write(frame.data));
      else if (frame.channel === ERROR_CHANNEL) outcome = outcomeOfStatus(frame.data);
    });
    ws.on('error', (err) => {
      cleanup();
      reject(new CliError(`the exec stream failed: ${err.message}`));
    });
    ws.on('close', () => {
      cleanup();
      const rest = decoders[STDOUT_CHANNEL].end();
      if (rest) ctx.out(rest);
      if (!outcome) return reject(new CliError('the exec stream closed before the command reported its exit'));
      if ('error' in outcome) return reject(new CliError(outcome.error));
      resolve(outcome.exitCode);
    });
  });
}
