// `minik8s edit TYPE/NAME`: opens the live object in $KUBE_EDITOR or $EDITOR and sends what changed as a merge patch; a change the server finds invalid reopens the editor with the reasons, as kubectl does.
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../core/api/meta.js';
import { ApiError } from '../core/errors.js';
import { CliError, ConnectionError, formatError } from './cli-error.js';
import type { CliContext } from './context.js';
import { parseManifestText } from './manifests.js';
import { kindRef, objectRef, printJson, printYaml } from './printers.js';
import { parseResourceArgs } from './resolve-kind.js';
import { threeWayMergePatch } from './three-way-patch.js';

export interface EditArgs {
  resources: string[];
  output?: string;
}

/** kubectl's header, so the file explains itself to whoever opens it. */
export const EDIT_HEADER = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`;

/**
 * The merge patch from the object as fetched to the object as edited: changed fields, removed
 * ones as null, lists whole. Status is left out: it is the controllers' to write.
 */
export function editPatch(original: KubeObject, edited: KubeObject): Record<string, unknown> {
  return threeWayMergePatch({ original, modified: edited, current: original });
}

/** kubectl refuses an edit that renames the object or changes what it is. */
export function checkIdentity(original: KubeObject, edited: KubeObject): void {
  if (original.apiVersion !== edited.apiVersion || original.kind !== edited.kind || original.metadata.name !== edited.metadata.name)
    throw new CliError('At least one of apiVersion, kind and name was changed');
}

/** The editor command kubectl would run: $KUBE_EDITOR, else $EDITOR, else vi. */
export function editorCommand(env: NodeJS.ProcessEnv): string {
  return env.KUBE_EDITOR?.trim() || env.EDITOR?.trim() || 'vi';
}

/** Runs the editor on `path` through the shell, as kubectl does, so `EDITOR="code --wait"` works. */
function runEditor(editor: string, path: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', `${editor} "$1"`, 'sh', path], { stdio: 'inherit', env });
    child.on('error', (err) => reject(new CliError(`there was a problem with the editor "${editor}": ${err.message}`)));
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new CliError(`there was a problem with the editor "${editor}" (${signal ? `signal ${signal}` : `exit status ${code}`})`));
    });
  });
}

/** Drops the lines kubectl ignores: those whose first non-blank character is `#`. */
function stripComments(text: string): string {
  return text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n');
}

/** kubectl edit hides managedFields (--show-managed-fields=false); the patch is then computed without them too. */
function withoutManagedFields(obj: KubeObject): KubeObject {
  const { managedFields: _hidden, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** kubectl's name for a resource in edit's messages: `deployments.apps`, `pods`. */
function resourceString(def: { resource: string; group: string }): string {
  return def.group ? `${def.resource}.${def.group}` : def.resource;
}

/** The header kubectl reopens the file with after the server refused it as invalid: each cause as `# * field: message`. */
export function invalidHeader(what: string, err: ApiError): string {
  const causes = err.details.causes ?? [];
  const lines = causes.length ? causes.map((c) => `# * ${c.field ? `${c.field}: ` : ''}${c.message}`) : [`# * ${err.message}`];
  return `${EDIT_HEADER}# ${what} was not valid:\n${lines.join('\n')}\n#\n`;
}

export async function runEdit(ctx: CliContext, args: EditArgs): Promise<number> {
  const output = args.output ?? 'yaml';
  if (output !== 'yaml' && output !== 'json') throw new CliError(`the edit mode "${output}" is not supported: use yaml or json`);
  const { targets } = parseResourceArgs(args.resources);
  const target = targets[0]!;
  if (targets.length !== 1 || target.names.length !== 1) throw new CliError('edit takes one object: TYPE/NAME or TYPE NAME');
  const { def } = target;
  const namespace = def.namespaced ? ctx.namespace : undefined;
  const client = ctx.client();
  const original = withoutManagedFields(await client.get(def, { namespace, name: target.names[0]! }));
  const what = `${resourceString(def)} "${original.metadata.name}"`;
  const body = output === 'json' ? printJson(original) : await printYaml(original);
  const originalText = EDIT_HEADER + body;
  const path = join(tmpdir(), `minik8s-edit-${randomInt(1_000_000_000, 4_294_967_295)}.${output}`);
  // Only the user may read it: the object may hold secrets.
  await writeFile(path, originalText, { mode: 0o600, flag: 'wx' });
  const env = ctx.env ?? process.env;
  const keepFile = (message: string) => {
    keep = true;
    ctx.err(`${message}A copy of your changes has been stored to "${path}"\n`);
    return 1;
  };
  let keep = false;
  /** After a refusal as invalid: the text the user last saved, comments aside; saving it unchanged gives up. */
  let refused: string | undefined;
  try {
    for (;;) {
      await runEditor(editorCommand(env), path, env);
      const editedText = await readFile(path, 'utf8');
      if (refused !== undefined && stripComments(editedText) === refused) return keepFile('error: Edit cancelled, no valid changes were saved.\n');
      if (refused === undefined && stripComments(editedText) === stripComments(originalText)) {
        ctx.err('Edit cancelled, no changes made.\n');
        return 0;
      }
      if (stripComments(editedText).trim() === '') {
        ctx.err('Edit cancelled, saved file was empty.\n');
        return 0;
      }
      let patch: Record<string, unknown>;
      try {
        const objects = parseManifestText(editedText, path);
        if (objects.length !== 1) throw new CliError(`the edited file must hold one object, found ${objects.length}`);
        const edited = objects[0]!;
        checkIdentity(original, edited);
        patch = editPatch(original, edited);
      } catch (err) {
        return keepFile(formatError(err, env));
      }
      if (Object.keys(patch).length === 0) {
        ctx.err('Edit cancelled, no changes made.\n');
        return 0;
      }
      try {
        // As kubectl's, the patch carries no resourceVersion unless the user changed it, so a write by
        // someone else in the meantime is no conflict: the server applies the change to the latest object.
        await client.patch(def, { namespace, name: original.metadata.name ?? '' }, patch);
      } catch (err) {
        if (err instanceof ConnectionError || !(err instanceof ApiError)) throw err;
        if (err.code === 422) {
          // kubectl reopens the file with the server's reasons at the top and the user's text below.
          ctx.err(`error: ${what} is invalid\n`);
          refused = stripComments(editedText);
          await writeFile(path, invalidHeader(what, err) + refused);
          continue;
        }
        if (err.code === 404) {
          keep = true;
          ctx.err(`error: ${what} could not be found on the server\nThe edits you made on deleted resources have been saved to "${path}"\n`);
          return 1;
        }
        // A conflict (the user changed metadata.resourceVersion, so asked for that version only) or any other
        // refusal: kubectl suggests `replace -f`; minik8s has none, so editing again from the live object is the way.
        keep = true;
        ctx.err(
          `error: ${what} could not be patched: ${err.message}\nYour changes are in "${path}"; run \`minik8s edit ${kindRef(def)}/${original.metadata.name}\` to edit the latest version.\n`,
        );
        return 1;
      }
      ctx.out(`${objectRef(def, original)} edited\n`);
      return 0;
    }
  } finally {
    if (!keep) await rm(path, { force: true });
  }
}
