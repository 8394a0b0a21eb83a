// Event (v1): a record of something that happened to an object (scheduled, pulled, backing off, ...).
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema, timestampSchema } from './meta.js';
import { objectReferenceSchema } from './endpoints.js';

export const eventSchema = kindSchema('v1', 'Event', {
  involvedObject: objectReferenceSchema,
  reason: v.optional(v.string()),
  message: v.optional(v.string()),
  type: v.optional(v.picklist(['Normal', 'Warning']), 'Normal'),
  source: v.optional(v.strictObject({ component: v.optional(v.string()), host: v.optional(v.string()) })),
  firstTimestamp: v.optional(v.nullable(timestampSchema)),
  lastTimestamp: v.optional(v.nullable(timestampSchema)),
  eventTime: v.optional(v.nullable(v.string())),
  count: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be greater than or equal to 0'))),
  action: v.optional(v.string()),
  related: v.optional(objectReferenceSchema),
  reportingComponent: v.optional(v.string()),
  reportingInstance: v.optional(v.string()),
  series: v.optional(v.strictObject({ count: v.optional(v.number()), lastObservedTime: v.optional(v.string()) })),
});
export type Event = v.InferOutput<typeof eventSchema>;

export const eventKind: KindDefinition = {
  kind: 'Event',
  group: '',
  version: 'v1',
  resource: 'events',
  singular: 'event',
  shortNames: ['ev'],
  namespaced: true,
  schema: eventSchema,
  statusSubresource: false,
  fieldSelectors: [
    'involvedObject.kind',
    'involvedObject.name',
    'involvedObject.namespace',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.fieldPath',
    'reason',
    'type',
    'source',
  ],
  columns: [
    { name: 'TYPE', value: (o) => (o as Event).type },
    { name: 'REASON', value: (o) => (o as Event).reason ?? '' },
    {
      name: 'OBJECT',
      value: (o) => {
        const r = (o as Event).involvedObject;
        return `${(r.kind ?? '').toLowerCase()}/${r.name ?? ''}`;
      },
    },
    { name: 'MESSAGE', value: (o) => ((o as Event).message ?? '').replace(/\s+/g, ' ').trim() },
  ],
};
