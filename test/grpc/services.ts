// A small gRPC service defined in code (JSON messages, no .proto), real servers on 127.0.0.1
// port 0, a client call as a promise that keeps the status, trailers included, and the closing
// of what a test opened.
import {
  Metadata,
  Server,
  ServerCredentials,
  credentials,
  makeGenericClientConstructor,
  status,
  type CallOptions,
  type Client,
  type ClientReadableStream,
  type ClientUnaryCall,
  type Interceptor,
  type ServerInterceptor,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { afterEach } from 'vitest';

export interface EchoRequest {
  readonly text: string;
  /** Ask the handler to hold the call until released (tests that need calls in flight). */
  readonly hold?: boolean;
}
export interface EchoReply {
  readonly text: string;
}

const toJson = (value: unknown): Buffer => Buffer.from(JSON.stringify(value ?? null));
const fromJson = <T>(bytes: Buffer): T => JSON.parse(bytes.toString('utf8')) as T;

function method(path: string, responseStream: boolean) {
  return {
    path,
    requestStream: false,
    responseStream,
    requestSerialize: toJson,
    requestDeserialize: fromJson<EchoRequest>,
    responseSerialize: toJson,
    responseDeserialize: fromJson<EchoReply>,
  };
}

/** `/test.Echo/Echo` (unary), `/test.Echo/Again` (unary), `/test.Echo/Watch` (server streaming). */
export const EchoService = {
  echo: method('/test.Echo/Echo', false),
  again: method('/test.Echo/Again', false),
  watch: method('/test.Echo/Watch', true),
} satisfies ServiceDefinition;

export const EchoClient = makeGenericClientConstructor(EchoService, 'Echo');

export interface TestServer {
  readonly server: Server;
  readonly address: string;
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1:0 with `implementation` and `interceptors`. */
export async function startServer(
  implementation: UntypedServiceImplementation,
  interceptors: ServerInterceptor[] = [],
): Promise<TestServer> {
  const server = new Server({ interceptors });
  server.addService(EchoService, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, p) =>
      error === null ? resolve(p) : reject(error),
    ),
  );
  return {
    server,
    address: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

/** What a test opens and must close: a `TestServer`, a guard. */
export interface Closable {
  close(): unknown;
}

/**
 * Registers `hook` (default `afterEach`) to close whatever the returned function was handed
 * since, in the order handed (a guard before its server); the function returns what it is handed:
 * `const closing = closedAfter(); … closing(await startServer(…))`.
 */
export function closedAfter(
  hook: (fn: () => Promise<void>) => void = afterEach,
): <T extends Closable>(thing: T) => T {
  const open: Closable[] = [];
  hook(async () => {
    await Promise.all(open.splice(0).map((thing) => thing.close()));
  });
  return (thing) => {
    open.push(thing);
    return thing;
  };
}

type UnaryMethod = (
  request: EchoRequest,
  metadata: Metadata,
  options: CallOptions,
  callback: (error: ServiceError | null, value?: EchoReply) => void,
) => ClientUnaryCall;

/** The client's methods, typed. */
export interface Echo extends Client {
  echo: UnaryMethod;
  again: UnaryMethod;
  watch(
    request: EchoRequest,
    metadata: Metadata,
    options?: CallOptions,
  ): ClientReadableStream<EchoReply>;
}

/** A client of `address`, with `interceptors`. */
export function client(address: string, interceptors: Interceptor[] = []): Echo {
  return new EchoClient(address, credentials.createInsecure(), { interceptors }) as unknown as Echo;
}

/** What a unary call ended with. */
export interface Outcome {
  readonly code: status;
  readonly details: string;
  readonly value: EchoReply | undefined;
  readonly trailers: Record<string, string>;
  readonly error: ServiceError | undefined;
}

/** Calls `name` on `c` and waits for the status. */
export function unary(
  c: Echo,
  request: EchoRequest,
  p: {
    name?: 'echo' | 'again';
    metadata?: Metadata;
    options?: CallOptions;
    onCall?: (call: { cancel(): void }) => void;
  } = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    // grpc-js calls back before it emits the status: resolve once both have come.
    let answered: { error: ServiceError | null; value: EchoReply | undefined } | undefined;
    let trailers: Record<string, string> | undefined;
    const settle = (): void => {
      if (answered === undefined || trailers === undefined) return;
      const { error, value } = answered;
      resolve({
        code: error?.code ?? status.OK,
        details: error?.details ?? 'OK',
        value,
        trailers: error === null ? trailers : flat(error.metadata),
        error: error ?? undefined,
      });
    };
    const call = c[p.name ?? 'echo'](
      request,
      p.metadata ?? new Metadata(),
      p.options ?? {},
      (error, value) => {
        answered = { error, value };
        settle();
      },
    );
    call.on('status', (s: { metadata: Metadata }) => {
      trailers = flat(s.metadata);
      settle();
    });
    p.onCall?.(call);
  });
}

/** Metadata as a plain record of its text entries. */
export function flat(metadata: Metadata | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (metadata === undefined) return out;
  for (const [k, v] of Object.entries(metadata.getMap())) out[k] = String(v);
  return out;
}

/** Metadata from a plain record. */
export function metadataOf(fields: Record<string, string>): Metadata {
  const m = new Metadata();
  for (const [k, v] of Object.entries(fields)) m.set(k, v);
  return m;
}

/** Waits until `check` holds (polling each turn of the loop), or fails after `ms`. */
export async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
}
