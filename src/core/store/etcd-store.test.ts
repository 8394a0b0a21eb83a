// What etcd client failures mean to API clients (503, 413), and which of them count against the client's circuit breaker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokenCircuitError } from 'cockatiel';
import { ClientClosedError, EtcdError, GRPCDeadlineExceededError, GRPCInvalidArgumentError, GRPCResourceExhastedError, GRPCUnavailableError } from 'etcd3';
import { ApiError, NotFoundError } from '../errors.js';
import { isStoreFault, storeError } from './etcd-store.js';

const unavailable: [string, Error][] = [
  ['connection refused', new GRPCUnavailableError('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:2379')],
  ['a call past its deadline', new GRPCDeadlineExceededError('4 DEADLINE_EXCEEDED: Deadline exceeded')],
  ['the circuit breaker open', new BrokenCircuitError()],
  ['a closed client', new ClientClosedError('KV')],
];

for (const [what, err] of unavailable) {
  test(`${what} is a 503 ServiceUnavailable with Retry-After`, () => {
    const mapped = storeError(err) as ApiError;
    assert.ok(mapped instanceof ApiError);
    assert.equal(mapped.code, 503);
    assert.equal(mapped.reason, 'ServiceUnavailable');
    assert.equal(mapped.toStatus().details?.retryAfterSeconds, 1);
  });
}

const tooLarge: [string, Error][] = [
  ['etcd refusing the request', new EtcdError('3 INVALID_ARGUMENT: etcdserver: request is too large')],
  ['gRPC refusing the message', new GRPCResourceExhastedError('8 RESOURCE_EXHAUSTED: grpc: received message larger than max (2097321 vs. 2097152)')],
];

for (const [what, err] of tooLarge) {
  test(`${what} is a 413 RequestEntityTooLarge that does not count against the circuit breaker`, () => {
    const mapped = storeError(err) as ApiError;
    assert.equal(mapped.code, 413);
    assert.equal(mapped.reason, 'RequestEntityTooLarge');
    assert.equal(isStoreFault(err), false);
  });
}

test('connection failures count against the circuit breaker; request errors do not', () => {
  assert.equal(isStoreFault(new GRPCUnavailableError('14 UNAVAILABLE: connection refused')), true);
  assert.equal(isStoreFault(new GRPCResourceExhastedError('8 RESOURCE_EXHAUSTED: etcdserver: too many requests')), true);
  assert.equal(isStoreFault(new GRPCInvalidArgumentError('3 INVALID_ARGUMENT: etcdserver: key is not provided')), false);
});

test('API errors and unknown errors pass through unchanged', () => {
  const notFound = new NotFoundError('key "x" not found');
  assert.equal(storeError(notFound), notFound);
  const other = new Error('something else');
  assert.equal(storeError(other), other);
});
