// Encodes messages of the field table with protobufjs' reflection types: how tests (and tools) write protobuf bodies independently of the decoder.
import protobuf from 'protobufjs';
import { PROTOBUF_MAGIC } from './decode.js';
import { MESSAGE_SPECS } from './messages.js';

let root: protobuf.Root | undefined;

/** protobufjs types for every message in messages.ts, built once. */
function protobufRoot(): protobuf.Root {
  if (root) return root;
  root = new protobuf.Root();
  for (const message of MESSAGE_SPECS.values()) {
    const type = new protobuf.Type(message.name);
    for (const f of message.fields) {
      if (f.shape === 'map') type.add(new protobuf.MapField(f.name, f.number, 'string', f.type));
      else type.add(new protobuf.Field(f.name, f.number, f.type, f.shape === 'repeated' ? 'repeated' : 'optional'));
    }
    root.add(type);
  }
  return root;
}

/**
 * One message's bytes. `value` is in the message's own shape, not JSON's: a Quantity is
 * `{ string: '500m' }`, an IntOrString `{ type: 0, intVal: 80 }`, an inlined struct nested under
 * its field name (`{ localObjectReference: { name } }`).
 */
export function encodeMessage(name: string, value: Record<string, unknown>): Uint8Array {
  const type = protobufRoot().lookupType(name);
  return type.encode(type.fromObject(value)).finish();
}

/** A whole request body: `k8s\0` and a runtime.Unknown holding the encoded object. */
export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array, extra: Record<string, unknown> = {}): Buffer {
  return Buffer.concat([PROTOBUF_MAGIC, encodeMessage('Unknown', { typeMeta: { apiVersion, kind }, raw, ...extra })]);
}

/** `encodeEnvelope` of `encodeMessage(message, value)`. */
export function encodeObject(apiVersion: string, kind: string, message: string, value: Record<string, unknown>): Buffer {
  return encodeEnvelope(apiVersion, kind, encodeMessage(message, value));
}
