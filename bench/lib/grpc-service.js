// The gRPC service the gRPC benchmarks call, defined in code (no .proto): one unary method,
// `/bench.Bench/Call`, whose messages are raw bytes (the serializers pass buffers through), so
// what is measured is gRPC and the guard, not a codec. Also where a bench finds the build of
// Spillway it measures (`--dist`).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const same = (bytes) => bytes;

export const callPath = '/bench.Bench/Call';

/** The service definition, as grpc-js takes it (server) and makes a client of it. */
export const benchService = {
  call: {
    path: callPath,
    requestStream: false,
    responseStream: false,
    requestSerialize: same,
    requestDeserialize: same,
    responseSerialize: same,
    responseDeserialize: same,
  },
};

/** The request every call sends, and the reply an admitted call gets. */
export const requestBytes = Buffer.from('ping');
export const replyBytes = Buffer.from('ok');

const root = new URL('../../', import.meta.url);

/**
 * The URL of a build's folder (`dist`, a private `.dist-<name>`, or a copy elsewhere), relative
 * to the repository's root unless absolute; modules of the build are read from it.
 */
export function buildUrl(dir = 'dist') {
  return pathToFileURL(`${resolve(root.pathname, dir)}/`);
}

/** A module of the build under test, by its path inside the build (`grpc/index.js`). */
export function fromBuild(dir, path) {
  return import(new URL(path, buildUrl(dir)).href);
}
