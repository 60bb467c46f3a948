// The ambient context over gRPC, on loopback: a handler behind `grpcAdmission` (the unary
// wrapper, or only the interceptor) calls the next hop through `dependencyInterceptor` with no
// options, and the next hop receives the incoming call's deadline and criticality; a guard
// made with `ambientContext: false` sends neither. Interleaved calls of different
// criticalities do not see each other's.
import { Metadata, status, type ServerUnaryCall, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { dependency } from '../../src/client/index.js';
import { dependencyInterceptor, grpcAdmission } from '../../src/grpc/index.js';
import {
  client,
  closedAfter,
  metadataOf,
  startServer,
  unary,
  type Echo,
  type EchoReply,
  type EchoRequest,
} from './services.js';

const closing = closedAfter();

/** The next hop: records the fields it received, after a short pause (so calls interleave). */
async function recorder() {
  const seen: Record<string, string>[] = [];
  const server = await startServer({
    echo: (
      call: ServerUnaryCall<EchoRequest, EchoReply>,
      callback: (e: null, v: EchoReply) => void,
    ) => {
      const fields = Object.fromEntries(
        Object.entries(call.metadata.getMap()).map(([k, v]) => [k, String(v)]),
      );
      setTimeout(() => {
        seen.push({ ...fields, text: call.request.text });
        callback(null, { text: call.request.text });
      }, 5);
    },
  });
  closing(server);
  return { seen, address: server.address };
}

function forward(next: Echo, request: EchoRequest): Promise<EchoReply> {
  return new Promise((resolve, reject) =>
    next.echo(request, new Metadata(), {}, (e: ServiceError | null, v?: EchoReply) =>
      e === null ? resolve(v!) : reject(e),
    ),
  );
}

async function middle(
  nextAddress: string,
  options: { ambientContext?: boolean; wrapped: boolean },
) {
  const next = client(nextAddress, [
    dependencyInterceptor(dependency({ name: 'next', breaker: false, throttle: false })),
  ]);
  const guard = grpcAdmission({
    penaltyBox: false,
    criticality: { ceiling: 'critical-plus' },
    ...(options.ambientContext === undefined ? {} : { ambientContext: options.ambientContext }),
  });
  const server = options.wrapped
    ? await startServer({
        echo: guard.unary<EchoRequest, EchoReply>((call) => forward(next, call.request)),
      })
    : await startServer(
        {
          echo: (
            call: ServerUnaryCall<EchoRequest, EchoReply>,
            callback: (e: ServiceError | null, v?: EchoReply) => void,
          ) => {
            forward(next, call.request).then(
              (v) => callback(null, v),
              (e: ServiceError) => callback(e),
            );
          },
        },
        [guard.interceptor],
      );
  closing(server);
  return client(server.address);
}

const criticalities = ['critical-plus', 'critical', 'sheddable-plus', 'sheddable'] as const;

describe('the ambient context over gRPC', () => {
  for (const wrapped of [true, false]) {
    it(`carries each call's deadline and criticality to the next hop (${wrapped ? 'unary wrapper' : 'interceptor only'})`, async () => {
      const next = await recorder();
      const c = await middle(next.address, { wrapped });
      const calls = Array.from({ length: 12 }, (_, i) => {
        const criticality = criticalities[i % 4]!;
        return unary(
          c,
          { text: criticality },
          {
            metadata: metadataOf({ 'spillway-criticality': criticality }),
            options: { deadline: Date.now() + 4_000 },
          },
        );
      });
      for (const out of await Promise.all(calls)) expect(out.code).toBe(status.OK);
      expect(next.seen).toHaveLength(12);
      for (const fields of next.seen) {
        expect(fields['spillway-criticality']).toBe(fields['text']);
        expect(Number(fields['spillway-deadline'])).toBeLessThanOrEqual(4_000);
        expect(Number(fields['spillway-deadline'])).toBeGreaterThan(1_000);
      }
    });
  }

  it('carries nothing from a guard made with ambientContext: false', async () => {
    const next = await recorder();
    const c = await middle(next.address, { wrapped: true, ambientContext: false });
    const out = await unary(
      c,
      { text: 'x' },
      {
        metadata: metadataOf({ 'spillway-criticality': 'sheddable' }),
        options: { deadline: Date.now() + 4_000 },
      },
    );
    expect(out.code).toBe(status.OK);
    expect(next.seen[0]!['spillway-criticality']).toBe('critical');
    expect(next.seen[0]!['spillway-deadline']).toBeUndefined();
  });
});
