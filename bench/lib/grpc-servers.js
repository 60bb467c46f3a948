// The servers the gRPC cost bench measures, one per process:
// `node bench/lib/grpc-servers.js <case> [dist]`. Each is a grpc-js server of lib/grpc-service.js
// on 127.0.0.1 answering every call the same way (OK, UNAVAILABLE or RESOURCE_EXHAUSTED); it
// reports over IPC its port and whether the driver must first hold its only slot (the capacity
// cases: the driver makes one call that never settles, as lib/hold-slot.js explains for S8), and
// answers {cmd: 'cpu'} with its process.cpuUsage(). The second argument names the build to load
// (default dist; a private `.dist-<name>` so a change can be measured without the shared dist/).
// The client CPU bench (grpc-client-cpu.js) calls the 'bare OK' server.
import { Metadata, Server, ServerCredentials, ServerInterceptingCall, status } from '@grpc/grpc-js';
import { benchService, fromBuild, replyBytes } from './grpc-service.js';

const kind = process.argv[2];
const dist = process.argv[3] ?? 'dist';
const grpc = () => fromBuild(dist, 'grpc/index.js');
const never = new Promise(() => {});
const pushbackMs = '1000';

/** The cheapest hand-written refusal: the status, its details, and a pushback trailer. */
function refusal(code, details, ms = pushbackMs) {
  const metadata = new Metadata();
  metadata.set('grpc-retry-pushback-ms', ms);
  return { code, details, metadata };
}

const ok = (_call, callback) => callback(null, replyBytes);

/** A capacity case's handler: it never answers, so the driver's first call keeps the slot. */
function holdForever() {
  process.send({ held: true });
  return never;
}

/** A server interceptor that passes everything through: what grpc-js's interceptors cost. */
const passThrough = (_method, call) => new ServerInterceptingCall(call);

/** A server interceptor refusing every call when its metadata arrives, as Spillway's does. */
const refusingInterceptor = (_method, call) =>
  new ServerInterceptingCall(call, {
    start: (next) =>
      next({
        onReceiveMetadata: () => {
          call.sendStatus(refusal(status.UNAVAILABLE, 'overloaded'));
        },
      }),
  });

/** The client's address without its port: the key a per-client quota counts by. */
function addressOf(call) {
  const peer = call.getPeer();
  return peer.slice(0, peer.lastIndexOf(':'));
}

// Each case: { handler, interceptors?, hold? }.
const cases = {
  'bare OK': () => ({ handler: ok }),
  'bare UNAVAILABLE + pushback': () => ({
    handler: (_call, callback) => callback(refusal(status.UNAVAILABLE, 'overloaded')),
  }),
  'bare RESOURCE_EXHAUSTED + pushback': () => ({
    handler: (_call, callback) => callback(refusal(status.RESOURCE_EXHAUSTED, 'quota spent')),
  }),
  'bare interceptor OK': () => ({ handler: ok, interceptors: [passThrough] }),
  'bare interceptor UNAVAILABLE + pushback': () => ({
    handler: ok,
    interceptors: [refusingInterceptor],
  }),
  'spillway unary OK': async () => {
    const guard = (await grpc()).grpcAdmission({ limit: 1000, penaltyBox: false });
    return { handler: guard.unary(() => replyBytes) };
  },
  'spillway unary RESOURCE_EXHAUSTED': async () => {
    const guard = (await grpc()).grpcAdmission({
      quota: { ratePerSec: 0.001, burst: 1 },
      penaltyBox: false,
    });
    return { handler: guard.unary(() => replyBytes) };
  },
  'spillway unary UNAVAILABLE': async () => {
    const guard = (await grpc()).grpcAdmission({ limit: 1, penaltyBox: false });
    return { handler: guard.unary(holdForever), hold: true };
  },
  // The handler entering each call's ambient context (`ambientContext: true`, as a default guard
  // does once the process has a reader of it): async hooks on Node 20 and 22.
  'spillway unary OK + context': async () => {
    const guard = (await grpc()).grpcAdmission({
      limit: 1000,
      penaltyBox: false,
      ambientContext: true,
    });
    return { handler: guard.unary(() => replyBytes) };
  },
  'spillway interceptor OK': async () => {
    const guard = (await grpc()).grpcAdmission({ limit: 1000, penaltyBox: false });
    return { handler: ok, interceptors: [guard.interceptor] };
  },
  'spillway interceptor RESOURCE_EXHAUSTED': async () => {
    const guard = (await grpc()).grpcAdmission({
      quota: { ratePerSec: 0.001, burst: 1 },
      penaltyBox: false,
    });
    return { handler: ok, interceptors: [guard.interceptor] };
  },
  'spillway interceptor UNAVAILABLE': async () => {
    const guard = (await grpc()).grpcAdmission({ limit: 1, penaltyBox: false });
    return {
      handler: () => void holdForever(),
      interceptors: [guard.interceptor],
      hold: true,
    };
  },
  // Both doors, as docs/grpc.md advises: the interceptor admits, the wrapper takes the call over.
  'spillway interceptor + unary OK': async () => {
    const guard = (await grpc()).grpcAdmission({ limit: 1000, penaltyBox: false });
    return { handler: guard.unary(() => replyBytes), interceptors: [guard.interceptor] };
  },
  // No grpc-js server-side limiter exists as a package (see grpc-cost.js): the peers are the
  // general-purpose ones a grpc-js user would put in a handler by hand.
  'rate-limiter-flexible 11 RESOURCE_EXHAUSTED': async () => {
    const { RateLimiterMemory } = await import('rate-limiter-flexible');
    const limiter = new RateLimiterMemory({ points: 1, duration: 3600 });
    return {
      handler: (call, callback) => {
        limiter.consume(addressOf(call)).then(
          () => callback(null, replyBytes),
          (r) =>
            callback(
              refusal(status.RESOURCE_EXHAUSTED, 'quota spent', String(r.msBeforeNext ?? 1000)),
            ),
        );
      },
    };
  },
  'cockatiel 3 bulkhead UNAVAILABLE': async () => {
    const { bulkhead } = await import('cockatiel');
    const b = bulkhead(1, 0);
    return {
      handler: (_call, callback) => {
        b.execute(holdForever).catch(() => callback(refusal(status.UNAVAILABLE, 'bulkhead full')));
      },
      hold: true,
    };
  },
};

const make = cases[kind];
if (!make) {
  console.error(`unknown case '${kind}'; one of: ${Object.keys(cases).join(', ')}`);
  process.exit(2);
}
const { handler, interceptors = [], hold = false } = await make();
const server = new Server({ interceptors });
server.addService(benchService, { call: handler });
const port = await new Promise((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, p) =>
    error === null ? resolve(p) : reject(error),
  ),
);
process.on('message', (m) => {
  if (m?.cmd === 'cpu') process.send({ cpu: process.cpuUsage() });
  if (m?.cmd === 'exit') process.exit(0);
});
process.send({ ready: true, port, hold, cases: Object.keys(cases) });
