// `minik8s explain TYPE[.field...]`: a kind's fields, types and descriptions from the server's /openapi/v3, printed as kubectl prints them.
import { apiVersionOf, type KindDefinition } from '../core/api/kind.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { resolveKind } from './resolve-kind.js';

export interface ExplainArgs {
  /** `pods`, `pod.spec.containers`, `deployments.apps.spec` is not taken: the first word names the type. */
  path: string;
  recursive: boolean;
}

type Schema = {
  type?: string;
  description?: string;
  $ref?: string;
  allOf?: Schema[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[];
};

export interface OpenApiV3Document {
  components?: { schemas?: Record<string, Schema> };
}

const REF_PREFIX = '#/components/schemas/';

/** Follows `$ref` and a lone `allOf`, keeping the outer description (a field's own words come first). */
function resolve(doc: OpenApiV3Document, schema: Schema): Schema {
  let s = schema;
  for (let depth = 0; depth < 16; depth++) {
    const next = s.$ref ? doc.components?.schemas?.[s.$ref.slice(REF_PREFIX.length)] : s.allOf?.length === 1 && !s.properties ? s.allOf[0] : undefined;
    if (!next) break;
    s = { ...next, ...(s.description ? { description: s.description } : {}) };
  }
  return s;
}

/** kubectl's type words: `string`, `[]Container`, `map[string]string`, `Object`, a named object type's short name (a named scalar, such as IntOrString, by its type). */
export function typeName(doc: OpenApiV3Document, schema: Schema): string {
  if (schema.$ref) {
    const target = resolve(doc, { $ref: schema.$ref });
    if (target.type && target.type !== 'object') return typeName(doc, target);
    return schema.$ref.slice(schema.$ref.lastIndexOf('.') + 1);
  }
  if (schema.allOf?.length === 1 && !schema.properties) return typeName(doc, schema.allOf[0]!);
  if (schema.type === 'array' && schema.items) return `[]${typeName(doc, schema.items)}`;
  if (schema.type === 'object' && typeof schema.additionalProperties === 'object') return `map[string]${typeName(doc, schema.additionalProperties)}`;
  if (schema.type === 'object' || (!schema.type && schema.properties)) return 'Object';
  return schema.type ?? 'Object';
}

/** Whether a field's type is a named type (kubectl then also prints that type's own description). */
function namedTarget(doc: OpenApiV3Document, schema: Schema): Schema | undefined {
  if (schema.$ref) return doc.components?.schemas?.[schema.$ref.slice(REF_PREFIX.length)];
  if (schema.allOf?.length === 1 && !schema.properties) return namedTarget(doc, schema.allOf[0]!);
  if (schema.type === 'array' && schema.items) return namedTarget(doc, schema.items);
  return undefined;
}

/** Greedy word wrap at kubectl's 80 columns, indent included. */
export function wrap(text: string, indent: number, width = 80): string {
  const pad = ' '.repeat(indent);
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter((w) => w.length > 0)) {
      if (line && indent + line.length + 1 + word.length > width) {
        lines.push(pad + line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(line ? pad + line : '');
  }
  return lines.join('\n');
}

/** The fields of a schema (of a list's element, a map's value), once resolved. */
function fieldsOf(doc: OpenApiV3Document, schema: Schema): { properties: Record<string, Schema>; required: string[] } | undefined {
  let s = resolve(doc, schema);
  while (s.type === 'array' && s.items) s = resolve(doc, s.items);
  if (s.type === 'object' && typeof s.additionalProperties === 'object') s = resolve(doc, s.additionalProperties);
  return s.properties ? { properties: s.properties, required: s.required ?? [] } : undefined;
}

function fieldDescription(schema: Schema): string | undefined {
  return schema.description ?? (schema.type === 'array' && schema.items ? schema.items.description : undefined);
}

function fieldLines(doc: OpenApiV3Document, fields: { properties: Record<string, Schema>; required: string[] }, recursive: boolean, depth: number): string {
  let out = '';
  for (const name of Object.keys(fields.properties).sort()) {
    const schema = fields.properties[name]!;
    const resolved = resolve(doc, schema);
    const pad = '  '.repeat(depth + 1);
    out += `${pad}${name}\t<${typeName(doc, schema)}>${fields.required.includes(name) ? ' -required-' : ''}\n`;
    if (resolved.enum) out += `${pad}enum: ${resolved.enum.map(String).join(', ')}\n`;
    if (recursive) {
      const nested = fieldsOf(doc, schema);
      // Depth caps self-referring types (none today; CRDs may have them).
      if (nested && depth < 15) out += fieldLines(doc, nested, true, depth + 1);
    } else {
      // Only the field's own words: a named type's description is printed when the field itself is explained.
      out += `${wrap(fieldDescription(schema) ?? '<no description>', depth * 2 + 4)}\n\n`;
    }
  }
  return out;
}

/** The text kubectl explain prints for a kind's document, a path of fields below the kind, and --recursive. */
export function formatExplain(
  doc: OpenApiV3Document,
  def: Pick<KindDefinition, 'group' | 'version' | 'kind'>,
  fields: readonly string[],
  recursive: boolean,
): string {
  const schemas = doc.components?.schemas ?? {};
  const root = Object.values(schemas).find((s) =>
    s['x-kubernetes-group-version-kind']?.some((g) => g.group === def.group && g.version === def.version && g.kind === def.kind),
  );
  if (!root) throw new CliError(`couldn't find resource for "${apiVersionOf(def)}, Kind=${def.kind}"`);
  let schema: Schema = root;
  let fieldName: string | undefined;
  const walked: string[] = [];
  for (const field of fields) {
    const here = fieldsOf(doc, schema);
    const next = here?.properties[field];
    if (!next) throw new CliError(`field "${field}" does not exist`);
    walked.push(field);
    schema = next;
    fieldName = field;
  }
  const resolved = resolve(doc, schema);
  let out = '';
  if (def.group) out += `GROUP:      ${def.group}\n`;
  out += `KIND:       ${def.kind}\nVERSION:    ${def.version}\n\n`;
  const named = fieldName === undefined ? undefined : namedTarget(doc, schema);
  if (fieldName !== undefined) {
    out += `FIELD: ${fieldName} <${typeName(doc, schema)}>\n`;
    if (resolved.enum) out += `ENUM:\n${resolved.enum.map((e) => `    ${String(e)}`).join('\n')}\n`;
    // kubectl leaves an extra blank line after the field line of a named type.
    out += named ? '\n\n' : '\n';
  }
  const descriptions =
    fieldName === undefined ? [root.description] : [fieldDescription(schema), named?.description !== fieldDescription(schema) ? named?.description : undefined];
  const text = descriptions.filter((d): d is string => d !== undefined).map((d) => wrap(d, 4));
  out += `DESCRIPTION:\n${text.length > 0 ? text.join('\n') : '    <empty>'}\n    \n`;
  const nested = fieldsOf(doc, schema);
  if (nested) out += `FIELDS:\n${fieldLines(doc, nested, recursive, 0)}`;
  // As kubectl: a list of described fields ends with one more blank line than a tree or a bare field.
  return `${out.replace(/\n+$/, '')}${nested && !recursive ? '\n\n\n' : '\n\n'}`;
}

/** `/openapi/v3` -> the group/version document's URL -> the document. */
async function fetchDocument(ctx: CliContext, def: KindDefinition): Promise<OpenApiV3Document> {
  const client = ctx.client();
  const index = (await client.request('GET', '/openapi/v3')) as { paths?: Record<string, { serverRelativeURL?: string }> };
  const key = def.group ? `apis/${def.group}/${def.version}` : `api/${def.version}`;
  const url = index.paths?.[key]?.serverRelativeURL;
  if (!url) throw new CliError(`the server has no OpenAPI document for ${apiVersionOf(def)}`);
  return (await client.request('GET', url)) as OpenApiV3Document;
}

export async function runExplain(ctx: CliContext, args: ExplainArgs): Promise<number> {
  const [type, ...fields] = args.path.split('.');
  if (!type) throw new CliError('You must specify the type of resource to explain');
  const def = resolveKind(type);
  const doc = await fetchDocument(ctx, def);
  ctx.out(formatExplain(doc, def, fields, args.recursive));
  return 0;
}
