// THE CHAIN over gRPC: three real gRPC services A → B → C on loopback, the user calling A, C
// answering every call UNAVAILABLE. Naive clients (grpc-js's own retries, 3 attempts at every
// layer, no throttling) put 3³ = 27 attempts on C per user call; Spillway clients
// (`dependencyInterceptor` over a `dependency()` per hop: a budget each, `never` passed up, one
// retrying layer) put about one. A and B run behind `grpcAdmission`, whose unary wrapper passes
// C's overload up with its signal.
import { type ServiceError, type ServerUnaryCall } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependency, type DependencyOptions } from '../../src/client/index.js';
import { callOptions, dependencyInterceptor, grpcAdmission } from '../../src/grpc/index.js';
import {
  client,
  closedAfter,
  EchoClient,
  startServer,
  type Echo,
  type EchoReply,
  type EchoRequest,
  type TestServer,
} from './services.js';
import { credentials, Metadata, status, type CallOptions, type Interceptor } from '@grpc/grpc-js';

const closing = closedAfter(afterAll);
const counts = new Map<string, number>();
let c: TestServer;

function count(name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1);
}

beforeAll(async () => {
  c = await startServer({
    echo: (_call: unknown, callback: (e: object) => void) => {
      count('C');
      callback({ code: status.UNAVAILABLE, details: 'C is down' });
    },
  });
  closing(c);
});

/** A unary call as a promise. */
function call(to: Echo, request: EchoRequest, options: CallOptions = {}): Promise<EchoReply> {
  return new Promise((resolve, reject) => {
    to.echo(request, new Metadata(), options, (error: ServiceError | null, value?: EchoReply) =>
      error === null ? resolve(value!) : reject(error),
    );
  });
}

/** grpc-js's own retries: 3 attempts on UNAVAILABLE, a millisecond apart, no throttling. */
const naiveConfig = JSON.stringify({
  methodConfig: [
    {
      name: [{ service: 'test.Echo' }],
      retryPolicy: {
        maxAttempts: 3,
        initialBackoff: '0.001s',
        maxBackoff: '0.002s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
});

function naiveClient(address: string): Echo {
  return new EchoClient(address, credentials.createInsecure(), {
    'grpc.service_config': naiveConfig,
  }) as unknown as Echo;
}

/** A naive hop: calls the next with grpc-js's retries and passes its failure up as it is. */
async function naiveHop(name: string, next: string): Promise<TestServer> {
  const to = naiveClient(next);
  const s = await startServer({
    echo: (
      incoming: ServerUnaryCall<EchoRequest, EchoReply>,
      callback: (e: ServiceError | null, v?: EchoReply) => void,
    ) => {
      count(name);
      call(to, incoming.request).then(
        (v) => callback(null, v),
        (e: ServiceError) => callback(e),
      );
    },
  });
  return closing(s);
}

/** A Spillway hop: behind the guard, calling the next through a dependency. */
async function spillwayHop(
  name: string,
  next: string,
  options: Partial<DependencyOptions>,
): Promise<TestServer> {
  const to = client(next, [interceptorFor(`${name}→next`, options)]);
  const guard = grpcAdmission({ limit: 64, maxQueue: 64 });
  const s = await startServer({
    echo: guard.unary(async (incoming: ServerUnaryCall<EchoRequest, EchoReply>, context) => {
      count(name);
      return call(
        to,
        incoming.request,
        callOptions({ deadline: context, criticality: context.criticality }),
      );
    }),
  });
  return closing(s);
}

function interceptorFor(name: string, options: Partial<DependencyOptions>): Interceptor {
  return dependencyInterceptor(dependency({ ...options, name }), { idempotent: true });
}

/** Runs `requests` user calls, `concurrency` at a time; returns C's attempts per call. */
async function run(
  requests: number,
  concurrency: number,
  user: () => Promise<unknown>,
): Promise<number> {
  const before = counts.get('C') ?? 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        next++;
        await user().catch(() => {});
      }
    }),
  );
  return ((counts.get('C') ?? 0) - before) / requests;
}

async function spillwayChain(tag: string, options: Partial<DependencyOptions>) {
  const b = await spillwayHop(`B${tag}`, c.address, options);
  const a = await spillwayHop(`A${tag}`, b.address, options);
  const user = client(a.address, [interceptorFor(`user${tag}`, options)]);
  return () => call(user, { text: 'hi' }, callOptions({ deadline: 5_000 }));
}

describe('the chain A → B → C over gRPC, C answering UNAVAILABLE to everything', () => {
  it('naive clients put 27 attempts on C per user call; Spillway clients put ≤ 1.2', async () => {
    const nb = await naiveHop('nB', c.address);
    const na = await naiveHop('nA', nb.address);
    const naiveUser = naiveClient(na.address);
    const naive = await run(10, 5, () => call(naiveUser, { text: 'hi' }));

    // Spillway with nothing but the budget and `never` (breaker and throttle off).
    const budgetOnly = await spillwayChain('1', { breaker: false, throttle: false });
    const withBudget = await run(300, 8, budgetOnly);

    // Spillway with its defaults (budget, `never`, breaker, adaptive throttle).
    const defaults = await spillwayChain('2', {});
    const withDefaults = await run(300, 8, defaults);

    console.log(
      [
        'retry amplification at C over gRPC (attempts per user call):',
        `  naive clients, grpc-js retries, 3 per layer:       ${naive.toFixed(2)}  (10 user calls)`,
        `  spillway, budget + never only:                     ${withBudget.toFixed(2)}  (300 user calls)`,
        `  spillway defaults (+ breaker, adaptive throttle):  ${withDefaults.toFixed(2)}  (300 user calls)`,
      ].join('\n'),
    );
    expect(naive).toBe(27);
    expect(withBudget).toBeLessThanOrEqual(1.2);
    expect(withDefaults).toBeLessThanOrEqual(1.2);
    // One retrying layer: B (next to C) made the few retries; A and the user made none.
    expect(counts.get('A1')).toBe(300);
    expect(counts.get('B1')).toBe(300);
    // 1,800 gRPC calls through three hops: seconds on an idle machine, more beside other work.
  }, 90_000);
});
