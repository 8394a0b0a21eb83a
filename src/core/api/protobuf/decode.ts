// Reads a Kubernetes protobuf body (`k8s\0` + runtime.Unknown) into the JSON object a JSON client would have sent, by the field table in messages.ts.
import protobuf from 'protobufjs/minimal.js';
import { BadRequestError, UnsupportedMediaTypeError } from '../../errors.js';
import { type FieldSpec, MESSAGE_SPECS, type MessageSpec, PROTOBUF_KINDS } from './messages.js';

/** The media type Kubernetes' typed clients send. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** The four bytes every Kubernetes protobuf body starts with. */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Reader = protobuf.Reader;
type Json = string | number | boolean | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH = 2;

/** Whether a Content-Type names Kubernetes' protobuf encoding. */
export function isProtobufContentType(contentType: string | null | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === PROTOBUF_MEDIA_TYPE;
}

function malformed(why: string): BadRequestError {
  return new BadRequestError(`the protobuf request body is malformed: ${why}`);
}

function spec(name: string): MessageSpec {
  const found = MESSAGE_SPECS.get(name);
  if (!found) throw new Error(`protobuf table: no message ${name}`);
  return found;
}

function toSafeNumber(value: number | { toNumber(): number }, field: string): number {
  const n = typeof value === 'number' ? value : value.toNumber();
  if (!Number.isSafeInteger(n)) throw malformed(`${field} is out of range`);
  return n;
}

function wireTypeOf(field: FieldSpec): number {
  if (field.shape !== 'single' || !field.scalar) return WIRE_LENGTH;
  if (field.type === 'string' || field.type === 'bytes') return WIRE_LENGTH;
  return field.type === 'double' ? WIRE_FIXED64 : WIRE_VARINT;
}

function readScalar(reader: Reader, type: string, field: string): string | number | boolean | Uint8Array {
  switch (type) {
    case 'string':
      return reader.string();
    case 'bytes':
      return reader.bytes();
    case 'bool':
      return reader.bool();
    case 'int32':
      return reader.int32();
    case 'int64':
      return toSafeNumber(reader.int64() as unknown as number | { toNumber(): number }, field);
    case 'double':
      return reader.double();
    default:
      throw new Error(`protobuf table: unknown scalar ${type}`);
  }
}

/** A scalar's JSON form: bytes as base64, as Kubernetes' JSON carries them. */
function scalarJson(value: string | number | boolean | Uint8Array): Json {
  return value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') : value;
}

/** The list a repeated field collects into, made on its first element. */
function listOf(out: JsonObject, name: string): Json[] {
  const existing = out[name];
  if (Array.isArray(existing)) return existing;
  const list: Json[] = [];
  out[name] = list;
  return list;
}

/** The object a map field collects into, made on its first entry. */
function mapOf(out: JsonObject, name: string): JsonObject {
  const existing = out[name];
  if (typeof existing === 'object' && !Array.isArray(existing)) return existing;
  const map: JsonObject = {};
  out[name] = map;
  return map;
}

function isZero(value: Json): boolean {
  return value === '' || value === 0 || value === false;
}

/** A length-delimited field's end, checked against the message's. */
function subEnd(reader: Reader, end: number): number {
  const length = reader.uint32();
  const to = reader.pos + length;
  if (to > end) throw malformed('a field runs past the end of its message');
  return to;
}

/** A message must end where its length said: a field that ran past it means the bytes are not what they claim. */
function checkEnd(reader: Reader, end: number): void {
  if (reader.pos !== end) throw malformed('a field runs past the end of its message');
}

/** The special messages that JSON writes as scalars; undefined means "leave the field out". */
function specialJson(name: string, fields: Map<number, Json>): Json | undefined {
  if (name === 'Quantity') return (fields.get(1) as string | undefined) ?? '';
  if (name === 'IntOrString') return fields.get(1) === 1 ? ((fields.get(3) as string | undefined) ?? '') : ((fields.get(2) as number | undefined) ?? 0);
  {
    // Time
    const seconds = (fields.get(1) as number | undefined) ?? 0;
    if (seconds === 0 && !fields.get(2)) return undefined; // Go's zero time: JSON null.
    const date = new Date(seconds * 1000);
    if (Number.isNaN(date.getTime())) throw malformed('a time is out of range');
    return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

const SPECIAL = new Set(['Quantity', 'IntOrString', 'Time']);

/** Reads the scalar fields of a special message (no nesting) by number. */
function readSpecial(reader: Reader, end: number, name: string): Json | undefined {
  const message = spec(name);
  const fields = new Map<number, Json>();
  while (reader.pos < end) {
    const tag = reader.uint32();
    const field = message.byNumber.get(tag >>> 3);
    if (!field || (tag & 7) !== wireTypeOf(field)) {
      reader.skipType(tag & 7);
      continue;
    }
    fields.set(field.number, scalarJson(readScalar(reader, field.type, `${name}.${field.name}`)));
  }
  checkEnd(reader, end);
  return specialJson(name, fields);
}

/** A map entry: key = 1 (string), value = 2. */
function readMapEntry(reader: Reader, end: number, field: FieldSpec, depth: number): [string, Json] {
  let key = '';
  let value: Json | undefined;
  while (reader.pos < end) {
    const tag = reader.uint32();
    const number = tag >>> 3;
    const wire = tag & 7;
    if (number === 1 && wire === WIRE_LENGTH) key = reader.string();
    else if (number === 2 && field.scalar && wire === wireTypeOf({ ...field, shape: 'single' })) {
      value = scalarJson(readScalar(reader, field.type, field.name));
    } else if (number === 2 && !field.scalar && wire === WIRE_LENGTH) {
      value = readValue(reader, subEnd(reader, end), field.type, depth + 1);
    } else reader.skipType(wire);
  }
  checkEnd(reader, end);
  if (key === '__proto__') throw malformed(`field "${field.name}" has the key "__proto__", which is not allowed`);
  // An entry without a value carries the type's zero value.
  if (value === undefined) value = field.scalar ? (field.type === 'bool' ? false : field.type === 'string' || field.type === 'bytes' ? '' : 0) : {};
  return [key, value];
}

function readValue(reader: Reader, end: number, name: string, depth: number): Json | undefined {
  if (SPECIAL.has(name)) return readSpecial(reader, end, name);
  return readMessage(reader, end, spec(name), depth);
}

/** Reads one message's fields up to `end`, into its JSON object. */
function readMessage(reader: Reader, end: number, message: MessageSpec, depth: number): JsonObject {
  if (depth > 64) throw malformed('messages are nested too deeply');
  const out: JsonObject = {};
  const inlined: JsonObject[] = [];
  while (reader.pos < end) {
    const tag = reader.uint32();
    const wire = tag & 7;
    const field = message.byNumber.get(tag >>> 3);
    if (!field) {
      reader.skipType(wire);
      continue;
    }
    const where = `${message.name}.${field.name}`;
    if (field.shape === 'map') {
      if (wire !== WIRE_LENGTH) throw malformed(`${where} has the wrong wire type`);
      const [key, value] = readMapEntry(reader, subEnd(reader, end), field, depth);
      const map = mapOf(out, field.name);
      map[key] = value;
      continue;
    }
    if (field.scalar) {
      const single = wireTypeOf({ ...field, shape: 'single' });
      if (field.shape === 'repeated' && wire === WIRE_LENGTH && single !== WIRE_LENGTH) {
        // A packed list of numbers.
        const to = subEnd(reader, end);
        const list = listOf(out, field.name);
        while (reader.pos < to) list.push(scalarJson(readScalar(reader, field.type, where)));
        continue;
      }
      if (wire !== single) throw malformed(`${where} has the wrong wire type`);
      const value = scalarJson(readScalar(reader, field.type, where));
      if (field.shape === 'repeated') listOf(out, field.name).push(value);
      else if (field.pointer || !isZero(value)) out[field.name] = value;
      else delete out[field.name];
      continue;
    }
    if (wire !== WIRE_LENGTH) throw malformed(`${where} has the wrong wire type`);
    const value = readValue(reader, subEnd(reader, end), field.type, depth + 1);
    if (field.shape === 'repeated') {
      listOf(out, field.name).push(value ?? {});
    } else if (field.inline) {
      inlined.push(value as JsonObject);
    } else if (value === undefined || (field.type === 'IntOrString' && !field.pointer && value === 0)) {
      // Go's zero time, or an unset IntOrString that JSON would carry as 0 (Kubernetes defaults it).
      delete out[field.name];
    } else out[field.name] = value;
  }
  checkEnd(reader, end);
  return inlined.length === 0 ? out : Object.assign({}, ...inlined, out);
}

/** The envelope's parts: which kind, and the object's bytes. */
export interface ProtobufEnvelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
}

/** Reads the `k8s\0` envelope (a runtime.Unknown); 400 when it is not one. */
export function readEnvelope(body: Uint8Array): ProtobufEnvelope {
  if (body.byteLength < 4 || !PROTOBUF_MAGIC.equals(body.subarray(0, 4))) {
    throw malformed('it does not start with the Kubernetes protobuf prefix "k8s\\x00"');
  }
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array = new Uint8Array(0);
  let contentEncoding = '';
  try {
    const reader = protobuf.Reader.create(body.subarray(4));
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      const number = tag >>> 3;
      const wire = tag & 7;
      if (number === 1 && wire === WIRE_LENGTH) {
        const end = subEnd(reader, reader.len);
        while (reader.pos < end) {
          const inner = reader.uint32();
          if (inner >>> 3 === 1 && (inner & 7) === WIRE_LENGTH) apiVersion = reader.string();
          else if (inner >>> 3 === 2 && (inner & 7) === WIRE_LENGTH) kind = reader.string();
          else reader.skipType(inner & 7);
        }
        checkEnd(reader, end);
      } else if (number === 2 && wire === WIRE_LENGTH) raw = reader.bytes();
      else if (number === 3 && wire === WIRE_LENGTH) contentEncoding = reader.string();
      else reader.skipType(wire);
    }
  } catch (err) {
    if (err instanceof BadRequestError) throw err;
    throw malformed(err instanceof Error ? err.message : String(err));
  }
  if (contentEncoding !== '') throw new UnsupportedMediaTypeError(`protobuf content encoding "${contentEncoding}" is not supported: send application/json`);
  if (kind === '' || apiVersion === '') throw malformed('the envelope names no apiVersion and kind');
  return { apiVersion, kind, raw };
}

/**
 * Decodes a Kubernetes protobuf request body into the object a JSON body would hold: apiVersion
 * and kind from the envelope, then the message's fields by Kubernetes' numbers. 415 for a kind
 * this server does not read in protobuf, 400 for bytes that are not a well-formed message.
 * Callers validate the result exactly as they validate JSON.
 */
export function decodeProtobufObject(body: Uint8Array): Record<string, unknown> {
  const { apiVersion, kind, raw } = readEnvelope(body);
  const name = PROTOBUF_KINDS[`${apiVersion} ${kind}`];
  if (!name) {
    throw new UnsupportedMediaTypeError(
      `${kind} (${apiVersion}) is not accepted in protobuf (${PROTOBUF_MEDIA_TYPE}) by this server: send it as application/json`,
    );
  }
  let object: JsonObject;
  try {
    const reader = protobuf.Reader.create(raw);
    object = readMessage(reader, reader.len, spec(name), 0);
  } catch (err) {
    if (err instanceof BadRequestError) throw err;
    throw malformed(err instanceof Error ? err.message : String(err));
  }
  return { apiVersion, kind, ...object };
}
