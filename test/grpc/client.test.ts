// `spillway/grpc`'s client interceptor over real gRPC on loopback, against a scripted server
// with no guard (it answers what each test tells it to, and records what it received): the
// context in metadata (deadline, criticality, attempt); retries of idempotent calls only,
// honouring pushback (a negative one stops) within one deadline; the cap; the breaker; answers
// passed through unchanged; cancellation; streaming calls untouched.
import { Metadata, status, type ServerUnaryCall, type ServerWritableStream } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { dependency, type DependencyOptions } from '../../src/client/index.js';
import { callOptions, dependencyInterceptor } from '../../src/grpc/index.js';
import {
  client,
  closedAfter,
  metadataOf,
  startServer,
  unary,
  until,
  type EchoReply,
  type EchoRequest,
} from './services.js';

interface Seen {
  readonly metadata: Record<string, string>;
  /** Ms left of the call's gRPC deadline when it arrived. */
  readonly grpcLeftMs: number;
  readonly at: number;
  cancelled: boolean;
}

/** What the scripted server answers to its n-th call (1-based). */
type Script = (
  n: number,
) =>
  | { readonly reply: EchoReply }
  | { readonly code: status; readonly trailers?: Record<string, string> }
  | 'hold';

const closing = closedAfter();

async function scripted(script: Script) {
  const seen: Seen[] = [];
  const held: (() => void)[] = [];
  const server = await startServer({
    echo: (
      call: ServerUnaryCall<EchoRequest, EchoReply>,
      callback: (error: object | null, value?: EchoReply) => void,
    ) => {
      const deadline = call.getDeadline();
      const at = deadline instanceof Date ? deadline.getTime() : deadline;
      const entry: Seen = {
        metadata: Object.fromEntries(
          Object.entries(call.metadata.getMap()).map(([k, v]) => [k, String(v)]),
        ),
        grpcLeftMs: at - Date.now(),
        at: performance.now(),
        cancelled: false,
      };
      seen.push(entry);
      call.on('cancelled', () => (entry.cancelled = !entry.cancelled && call.cancelled));
      const answer = script(seen.length);
      if (answer === 'hold') {
        held.push(() => callback(null, { text: 'late' }));
        return;
      }
      if ('reply' in answer) callback(null, answer.reply);
      else
        callback({
          code: answer.code,
          details: 'scripted',
          metadata: metadataOf(answer.trailers ?? {}),
        });
    },
    watch: (call: ServerWritableStream<EchoRequest, EchoReply>) => {
      call.write({ text: `${call.request.text}-1` });
      call.write({ text: `${call.request.text}-2` });
      call.end();
    },
  });
  closing(server);
  return { seen, held, server };
}

function through(address: string, options: Partial<DependencyOptions> = {}, idempotent = true) {
  const dep = dependency({ name: 'echo', breaker: false, throttle: false, ...options });
  return { dep, c: client(address, [dependencyInterceptor(dep, { idempotent })]) };
}

const refuse = (trailers: Record<string, string> = {}) => ({ code: status.UNAVAILABLE, trailers });

describe('dependencyInterceptor: context in metadata', () => {
  it('sends the remaining deadline, the criticality and the attempt, with a gRPC deadline to match', async () => {
    const s = await scripted(() => ({ reply: { text: 'ok' } }));
    const { c } = through(s.server.address);
    const out = await unary(
      c,
      { text: 'a' },
      {
        metadata: metadataOf({ 'x-trace': 't1' }),
        options: callOptions({ criticality: 'sheddable', deadline: 2_000 }),
      },
    );
    expect(out.code).toBe(status.OK);
    expect(out.value).toEqual({ text: 'ok' });
    const [seen] = s.seen;
    expect(seen!.metadata['x-trace']).toBe('t1');
    expect(seen!.metadata['spillway-criticality']).toBe('sheddable');
    expect(seen!.metadata['spillway-attempt']).toBe('1');
    const left = Number(seen!.metadata['spillway-deadline']);
    expect(left).toBeLessThanOrEqual(2_000);
    expect(left).toBeGreaterThan(500);
    expect(seen!.grpcLeftMs).toBeLessThanOrEqual(2_000);
    expect(seen!.grpcLeftMs).toBeGreaterThan(500);
  });

  it('takes grpc-js’s own deadline as the call’s, and the criticality the caller set in metadata', async () => {
    const s = await scripted(() => ({ reply: { text: 'ok' } }));
    const { c } = through(s.server.address);
    await unary(
      c,
      { text: 'a' },
      {
        metadata: metadataOf({ 'spillway-criticality': 'critical-plus' }),
        options: { deadline: Date.now() + 1_500 },
      },
    );
    expect(s.seen[0]!.metadata['spillway-criticality']).toBe('critical-plus');
    expect(Number(s.seen[0]!.metadata['spillway-deadline'])).toBeLessThanOrEqual(1_500);
  });
});

describe('dependencyInterceptor: retries', () => {
  it('retries an idempotent call the callee refused, numbering the attempts', async () => {
    const s = await scripted((n) =>
      n < 3 ? refuse({ 'grpc-retry-pushback-ms': '0' }) : { reply: { text: 'third' } },
    );
    const { c } = through(s.server.address, {
      retry: { maxAttempts: 3, backoff: { baseMs: 1, capMs: 5 } },
    });
    const out = await unary(c, { text: 'a' }, { options: callOptions({ deadline: 5_000 }) });
    expect(out.code).toBe(status.OK);
    expect(out.value).toEqual({ text: 'third' });
    expect(s.seen.map((x) => x.metadata['spillway-attempt'])).toEqual(['1', '2', '3']);
    // One deadline across the attempts: each is sent with what is left of it.
    const left = s.seen.map((x) => Number(x.metadata['spillway-deadline']));
    expect(left[1]).toBeLessThanOrEqual(left[0]!);
    expect(left[2]).toBeLessThanOrEqual(left[1]!);
  });

  it('does not retry a call that is not idempotent', async () => {
    const s = await scripted(() => refuse());
    const { c } = through(s.server.address, {}, false);
    const out = await unary(c, { text: 'a' });
    expect(out.code).toBe(status.UNAVAILABLE);
    expect(s.seen).toHaveLength(1);
  });

  it('a call can say it is idempotent for itself', async () => {
    const s = await scripted((n) =>
      n === 1 ? refuse({ 'grpc-retry-pushback-ms': '0' }) : { reply: { text: 'ok' } },
    );
    const { c } = through(s.server.address, { retry: { backoff: { baseMs: 1, capMs: 2 } } }, false);
    const out = await unary(c, { text: 'a' }, { options: callOptions({ idempotent: true }) });
    expect(out.code).toBe(status.OK);
    expect(s.seen).toHaveLength(2);
  });

  it('waits at least the pushback before the next attempt', async () => {
    const s = await scripted((n) =>
      n === 1 ? refuse({ 'grpc-retry-pushback-ms': '150' }) : { reply: { text: 'ok' } },
    );
    const { c } = through(s.server.address, { retry: { backoff: { baseMs: 1, capMs: 2 } } });
    expect((await unary(c, { text: 'a' })).code).toBe(status.OK);
    expect(s.seen[1]!.at - s.seen[0]!.at).toBeGreaterThanOrEqual(149);
  });

  it('stops at a negative pushback, and tells its own caller `never`', async () => {
    const s = await scripted(() => refuse({ 'grpc-retry-pushback-ms': '-1' }));
    const { c } = through(s.server.address);
    const out = await unary(c, { text: 'a' });
    expect(s.seen).toHaveLength(1);
    expect(out.code).toBe(status.UNAVAILABLE);
    expect(out.trailers['spillway-retry']).toBe('never');
    expect(out.trailers['grpc-retry-pushback-ms']).toBe('-1');
  });

  it('after retrying, tells its caller `never`, under the callee’s own code', async () => {
    const s = await scripted(() => ({
      code: status.RESOURCE_EXHAUSTED,
      trailers: { 'grpc-retry-pushback-ms': '1' },
    }));
    const { c } = through(s.server.address, {
      retry: { maxAttempts: 2, backoff: { baseMs: 1, capMs: 2 } },
    });
    const out = await unary(c, { text: 'a' });
    expect(s.seen).toHaveLength(2);
    expect(out.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(out.trailers['spillway-retry']).toBe('never');
  });

  it('never waits past the deadline: a pushback longer than what is left ends the call', async () => {
    const s = await scripted(() => refuse({ 'grpc-retry-pushback-ms': '10000' }));
    const { c } = through(s.server.address);
    const out = await unary(c, { text: 'a' }, { options: callOptions({ deadline: 1_000 }) });
    expect(s.seen).toHaveLength(1);
    expect(out.code).toBe(status.UNAVAILABLE);
    expect(out.trailers['spillway-retry']).toBe('never');
  });
});

describe('dependencyInterceptor: the dependency’s other obligations', () => {
  it('caps calls in flight: one over the cap is refused here, never sent', async () => {
    const s = await scripted((n) => (n === 1 ? 'hold' : { reply: { text: 'ok' } }));
    const { c, dep } = through(s.server.address, { limit: 1, maxQueue: 0 });
    const first = unary(c, { text: 'a' });
    await until(() => s.seen.length === 1);
    const second = await unary(c, { text: 'b' });
    expect(second.code).toBe(status.UNAVAILABLE);
    expect(second.trailers['spillway-retry']).toBe('later');
    expect(second.details).toMatch(/SPILLWAY_E_QUEUE_FULL/);
    expect(s.seen).toHaveLength(1);
    expect(dep.active).toBe(1);
    s.held.shift()!();
    expect((await first).code).toBe(status.OK);
    expect(dep.active).toBe(0);
  });

  it('opens the breaker on failures, then refuses without sending', async () => {
    const s = await scripted(() => ({ code: status.INTERNAL }));
    const { c, dep } = through(s.server.address, {
      breaker: { trip: { kind: 'consecutive', failures: 3 } },
    });
    for (let i = 0; i < 3; i++) {
      // The callee's failure reaches the caller as the callee sent it.
      expect(await unary(c, { text: 'a' })).toMatchObject({
        code: status.INTERNAL,
        details: 'scripted',
      });
    }
    expect(dep.breaker!.state).toBe('open');
    const refused = await unary(c, { text: 'a' });
    expect(refused.code).toBe(status.UNAVAILABLE);
    expect(refused.details).toMatch(/SPILLWAY_E_CIRCUIT_OPEN/);
    expect(s.seen).toHaveLength(3);
  });

  it('passes answers such as NOT_FOUND through unchanged, and counts them as answers', async () => {
    const s = await scripted(() => ({ code: status.NOT_FOUND, trailers: { 'x-why': 'gone' } }));
    const { c, dep } = through(s.server.address, {
      breaker: { trip: { kind: 'consecutive', failures: 1 } },
    });
    const out = await unary(c, { text: 'a' });
    expect(out.code).toBe(status.NOT_FOUND);
    expect(out.details).toBe('scripted');
    expect(out.trailers['x-why']).toBe('gone');
    expect(dep.breaker!.state).toBe('closed');
    expect(s.seen).toHaveLength(1);
  });

  it('cancels the attempt in flight when the caller cancels', async () => {
    const s = await scripted(() => 'hold');
    const { c, dep } = through(s.server.address);
    let cancel!: () => void;
    const call = unary(c, { text: 'a' }, { onCall: (x) => (cancel = () => x.cancel()) });
    await until(() => s.seen.length === 1);
    cancel();
    expect((await call).code).toBe(status.CANCELLED);
    await until(() => s.seen[0]!.cancelled);
    expect(dep.active).toBe(0);
  });

  it('ends CANCELLED when the caller’s signal aborts', async () => {
    const s = await scripted(() => 'hold');
    const { c } = through(s.server.address);
    const controller = new AbortController();
    const call = unary(c, { text: 'a' }, { options: callOptions({ signal: controller.signal }) });
    await until(() => s.seen.length === 1);
    controller.abort();
    expect((await call).code).toBe(status.CANCELLED);
  });

  it('lets streaming calls through untouched', async () => {
    const s = await scripted(() => ({ reply: { text: 'ok' } }));
    const { c, dep } = through(s.server.address, { limit: 1, maxQueue: 0 });
    const got: string[] = [];
    const stream = c.watch({ text: 'w' }, new Metadata());
    for await (const m of stream) got.push((m as EchoReply).text);
    expect(got).toEqual(['w-1', 'w-2']);
    expect(dep.active).toBe(0);
  });
});
