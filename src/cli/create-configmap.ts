// `minik8s create configmap NAME --from-literal=K=V --from-file=[K=]PATH`: a ConfigMap from flags, as kubectl create configmap builds it.
import { configMapKind } from '../core/api/configmap.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { readKeySources } from './key-sources.js';
import { objectRef } from './printers.js';

const KEY = /^[-._a-zA-Z0-9]+$/;

/** --from-literal and --from-file into data (UTF-8 text) and binaryData (anything else, base64), with kubectl's errors. */
export async function configMapData(
  name: string,
  fromLiteral: readonly string[],
  fromFile: readonly string[],
): Promise<{ data: Record<string, string>; binaryData: Record<string, string> }> {
  const data: Record<string, string> = {};
  const binaryData: Record<string, string> = {};
  const add = (key: string, value: Buffer) => {
    if (!KEY.test(key))
      throw new CliError(`"${key}" is not a valid key name for a ConfigMap: a valid config key must consist of alphanumeric characters, '-', '_' or '.'`);
    if (key in data || key in binaryData) throw new CliError(`cannot add key ${key}, another key by that name already exists in Data for ConfigMap "${name}"`);
    const text = value.toString('utf8');
    // Bytes that survive a round trip through UTF-8 are text, as kubectl's utf8.Valid check decides.
    if (Buffer.from(text, 'utf8').equals(value)) data[key] = text;
    else binaryData[key] = value.toString('base64');
  };
  await readKeySources(fromLiteral, fromFile, add, { takesFile: (file) => KEY.test(file) });
  return { data, binaryData };
}

export async function runCreateConfigMap(ctx: CliContext, name: string, args: { fromLiteral: string[]; fromFile: string[] }): Promise<number> {
  const { data, binaryData } = await configMapData(name, args.fromLiteral, args.fromFile);
  const body = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ctx.namespace },
    ...(Object.keys(data).length ? { data } : {}),
    ...(Object.keys(binaryData).length ? { binaryData } : {}),
  };
  const created = await ctx.client().create(configMapKind, body, { namespace: ctx.namespace });
  ctx.out(`${objectRef(configMapKind, created)} created\n`);
  return 0;
}
