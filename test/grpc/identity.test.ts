// The gRPC guard answers as the node:http guard does, over real sockets on loopback: the same
// options and the same steps (an admitted request, a spent deadline, a dependency's overload
// before and after a retry, capacity, shedding, a timed-out wait, an exempt method, a spent
// quota, another client's quota) through `spillway/node` and through `spillway/grpc`, each
// answer reduced to what both transports carry — the kind of refusal, the signal, the wait in
// whole seconds, the RateLimit fields and the detail.
import { createServer, type Server } from 'node:http';
import { Metadata, status, type ServerUnaryCall } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../../src/index.js';
import { admission, type AdmissionOptions, type RequestContext } from '../../src/node/index.js';
import { grpcAdmission } from '../../src/grpc/index.js';
import { createVirtualClock, type VirtualClock } from '../../src/testing/index.js';
import { close, listen, send, until, type Answer } from '../helpers/http.js';
import {
  client,
  startServer,
  unary,
  type EchoReply,
  type EchoRequest,
  type Outcome,
} from './services.js';

type Work = (path: string, context: RequestContext) => Promise<string>;

interface Harness {
  ask(path: string, fields?: Record<string, string>): Promise<Wire>;
  active(): number;
  queued(): number;
  stop(): Promise<void>;
}

/** An answer as both transports carry it. */
interface Wire {
  readonly kind: string;
  readonly signal: string | undefined;
  readonly waitSec: number | undefined;
  readonly policy: string | undefined;
  readonly rateLimit: string | undefined;
  readonly detail: string | undefined;
}

const kindOfStatus: Record<number, string> = { 200: 'ok', 429: 'quota', 503: 'unavailable' };
const kindOfCode: Partial<Record<status, string>> = {
  [status.OK]: 'ok',
  [status.RESOURCE_EXHAUSTED]: 'quota',
  [status.UNAVAILABLE]: 'unavailable',
  [status.DEADLINE_EXCEEDED]: 'deadline',
};

function httpWire(a: Answer): Wire {
  const body = a.status === 200 ? undefined : a.json<{ detail: string; type: string }>();
  // HTTP says a spent deadline with 503 and its own problem type; gRPC has a code for it.
  const deadline = body?.type === 'urn:spillway:problem:deadline-exceeded';
  return {
    kind: deadline ? 'deadline' : kindOfStatus[a.status]!,
    signal: a.headers['spillway-retry'] as string | undefined,
    waitSec: a.headers['retry-after'] === undefined ? undefined : Number(a.headers['retry-after']),
    policy: a.headers['ratelimit-policy'] as string | undefined,
    rateLimit: a.headers['ratelimit'] as string | undefined,
    detail: body?.detail,
  };
}

function grpcWire(o: Outcome): Wire {
  const pushback = o.trailers['grpc-retry-pushback-ms'];
  const ms = pushback === undefined ? undefined : Number(pushback);
  return {
    kind: kindOfCode[o.code] ?? String(o.code),
    signal: o.trailers['spillway-retry'],
    waitSec: ms === undefined || ms < 0 ? undefined : Math.max(1, Math.ceil(ms / 1000)),
    policy: o.trailers['ratelimit-policy'],
    rateLimit: o.trailers['ratelimit'],
    detail: o.code === status.OK ? undefined : o.details,
  };
}

const running: Harness[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((h) => h.stop()));
});

async function nodeHarness(options: AdmissionOptions, work: Work): Promise<Harness> {
  const guard = admission({
    ...options,
    key: (req) => req.headers['x-client-id'] as string | undefined,
  });
  const server: Server = createServer(
    guard.handle(async (req, res, ctx) => {
      res.end(await work(req.url!, ctx));
    }),
  );
  const port = await listen(server);
  return {
    ask: async (path, fields = {}) =>
      httpWire(await send(port, { path: path === '/exempt' ? '/healthz' : path, headers: fields })),
    active: () => guard.stats()!.active,
    queued: () => guard.stats()!.queued,
    stop: () => close(server),
  };
}

async function grpcHarness(options: AdmissionOptions, work: Work): Promise<Harness> {
  const { key: _key, exempt: _exempt, onError: _onError, ...rest } = options;
  const guard = grpcAdmission({
    ...rest,
    exempt: ['/test.Echo/Again'],
    key: (call) => {
      const id = call.metadata.get('x-client-id');
      return typeof id[0] === 'string' ? id[0] : undefined;
    },
  });
  const handler = async (call: ServerUnaryCall<EchoRequest, EchoReply>, ctx: RequestContext) => ({
    text: await work(call.request.text, ctx),
  });
  const server = await startServer({ echo: guard.unary(handler), again: guard.unary(handler) });
  const c = client(server.address);
  return {
    ask: async (path, fields = {}) => {
      const metadata = new Metadata();
      for (const [k, v] of Object.entries(fields)) metadata.set(k, v);
      const name = path === '/exempt' ? 'again' : 'echo';
      return grpcWire(await unary(c, { text: path }, { name, metadata }));
    },
    active: () => guard.admission.stats()!.active,
    queued: () => guard.admission.stats()!.queued,
    stop: async () => {
      c.close();
      await server.close();
    },
  };
}

async function scenario(
  make: (o: AdmissionOptions, w: Work) => Promise<Harness>,
  clock: VirtualClock,
) {
  const gates: (() => void)[] = [];
  const work: Work = async (path, ctx) => {
    if (path.startsWith('/dep-later'))
      throw new DependencyOverloadedError('busy', { signal: 'later', retryAfterMs: 4_000 });
    if (path.startsWith('/dep-retried'))
      throw new DependencyOverloadedError('busy', { signal: 'later', attempts: 3 });
    if (path.startsWith('/hold')) {
      await new Promise<void>((resolve) => {
        gates.push(resolve);
        ctx.signal.addEventListener('abort', () => resolve());
      });
    }
    return `ok ${ctx.criticality}`;
  };
  const h = await make(
    {
      clock,
      limit: 1,
      maxQueue: 1,
      maxQueueWaitMs: 50,
      quota: { ratePerSec: 1, burst: 7, name: 'api' },
      penaltyBox: false,
    },
    work,
  );
  running.push(h);
  const r = {} as Record<
    | 'ok'
    | 'deadline'
    | 'depLater'
    | 'depRetried'
    | 'capacity'
    | 'shed'
    | 'exempt'
    | 'queueTimeout'
    | 'quota'
    | 'otherClient',
    Wire
  >;
  r.ok = await h.ask('/plain', { 'spillway-criticality': 'sheddable-plus' });
  r.deadline = await h.ask('/plain', { 'spillway-deadline': '0' });
  r.depLater = await h.ask('/dep-later');
  r.depRetried = await h.ask('/dep-retried');
  const holding = h.ask('/hold-1');
  await until(() => h.active() === 1);
  const waiting = h.ask('/hold-2');
  await until(() => h.queued() === 1);
  r.capacity = await h.ask('/plain');
  r.shed = await h.ask('/plain', { 'spillway-criticality': 'sheddable' });
  r.exempt = await h.ask('/exempt');
  await clock.advance(50);
  r.queueTimeout = await waiting;
  gates.splice(0).forEach((f) => f());
  await holding;
  r.quota = await h.ask('/plain');
  r.otherClient = await h.ask('/plain', { 'x-client-id': 'other' });
  await until(() => h.active() === 0);
  return r;
}

describe('the gRPC guard answers as the node:http guard does', () => {
  it('the same kind, signal, wait, RateLimit fields and detail per step', async () => {
    const node = await scenario(nodeHarness, createVirtualClock());
    const grpc = await scenario(grpcHarness, createVirtualClock());
    expect(node.ok).toMatchObject({ kind: 'ok' });
    expect(node.deadline).toMatchObject({ kind: 'deadline', signal: 'never' });
    expect(node.depLater).toMatchObject({ kind: 'unavailable', signal: 'later', waitSec: 4 });
    expect(node.depRetried).toMatchObject({ kind: 'unavailable', signal: 'never' });
    expect(node.capacity).toMatchObject({ kind: 'unavailable', signal: 'later', waitSec: 1 });
    expect(node.shed).toMatchObject({ kind: 'unavailable', signal: 'later' });
    expect(node.exempt).toMatchObject({ kind: 'ok' });
    expect(node.queueTimeout).toMatchObject({ kind: 'unavailable', signal: 'later' });
    expect(node.quota).toMatchObject({
      kind: 'quota',
      policy: '"api";q=7;w=7',
      rateLimit: '"api";r=0;t=7',
      waitSec: 1,
    });
    expect(node.otherClient).toMatchObject({ kind: 'ok' });
    expect(grpc).toEqual(node);
  });
});
