// The cases the dependency.fetch benchmarks measure (client-cpu.js, the verdict, and the
// diagnostics client-instructions.js, client-alloc.js and client-rounds.js). Network cases,
// against the loopback server (lib/ok-server.js): a bare fetch, the same fetch given what the
// contract puts on the wire, dependency.fetch with its defaults and with less of its own work,
// and the peer the target names (cockatiel's policies around the same fetch); stub cases: the
// same calls to a fetch answering at once. Each maker builds one case's call (a function making
// one request and reading its body); `url` ends with '/'. Only the dependency cases load
// Spillway, so a process running a bare case never holds it.

/** The opt-in case run inside an ambient context (see {@link fetchCases}). */
export const ambientCase = 'dependency.fetch(path) in a request’s ambient context';

/**
 * @param {{ loadDependency: () => Promise<Function>, loadRunInContext?: () => Promise<Function>,
 *   deadlineMs: number }} options loads the client's `dependency` (and `runInContext`, for the
 *   ambient case) from the build being measured; the deadline the deadline cases send.
 * @returns {Record<string, (url: string) => Promise<() => Promise<unknown>>>}
 */
export function fetchCases({ loadDependency, loadRunInContext, deadlineMs }) {
  return {
    'bare fetch(url)': async (url) => async () => (await fetch(url)).arrayBuffer(),
    // What the contract itself puts on the wire: the propagation fields a default call sends.
    'bare fetch(url) with the two propagation fields': async (url) => {
      const init = { headers: { 'spillway-criticality': 'critical', 'spillway-attempt': '1' } };
      return async () => (await fetch(url, init)).arrayBuffer();
    },
    // …and with a deadline: its field, and a signal (with its timer) that would cancel the request.
    'bare fetch(url) with three fields and an abort signal': async (url) => async () => {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), deadlineMs);
      const headers = {
        'spillway-criticality': 'sheddable',
        'spillway-attempt': '1',
        'spillway-deadline': String(deadlineMs),
      };
      try {
        return await (await fetch(url, { headers, signal: controller.signal })).arrayBuffer();
      } finally {
        clearTimeout(timer);
      }
    },
    'dependency({ name, baseUrl }).fetch(path), defaults': async (url) => {
      const dependency = await loadDependency();
      const dep = dependency({ name: 'bench', baseUrl: url });
      return async () => (await dep.fetch('/')).arrayBuffer();
    },
    'dependency.fetch(path, undefined, { deadline, criticality })': async (url) => {
      const dependency = await loadDependency();
      const dep = dependency({ name: 'bench', baseUrl: url });
      const options = { deadline: deadlineMs, criticality: 'sheddable' };
      return async () => (await dep.fetch('/', undefined, options)).arrayBuffer();
    },
    // A call with no options inside a request's ambient context, made afresh per call as a
    // guard makes it (a deadline, a criticality, the request's signal): the call takes both from
    // it and joins the signal. Opt-in (named in --only): entering a context turns on async hooks
    // on Node 20 and 22, which every other case of the process would then pay as well.
    [ambientCase]: async (url) => {
      const dependency = await loadDependency();
      if (loadRunInContext === undefined) throw new Error(`${ambientCase} needs loadRunInContext`);
      const runInContext = await loadRunInContext();
      const dep = dependency({ name: 'bench', baseUrl: url });
      return async () => {
        const request = new AbortController();
        const context = {
          expiresAt: performance.now() + deadlineMs,
          signal: request.signal,
          criticality: 'sheddable',
          attempt: 1,
        };
        return runInContext(context, async () => (await dep.fetch('/')).arrayBuffer());
      };
    },
    'dependency.fetch(path), breaker and throttle off': async (url) => {
      const dependency = await loadDependency();
      const dep = dependency({ name: 'bench', baseUrl: url, breaker: false, throttle: false });
      return async () => (await dep.fetch('/')).arrayBuffer();
    },
    // The peer the target names (BENCHMARKS.md): cockatiel's composition of the same three
    // obligations around the same fetch.
    'cockatiel wrap(bulkhead, circuitBreaker, retry) around fetch(url)': async (url) => {
      const policy = await cockatielPolicy();
      return async () => policy.execute(async () => (await fetch(url)).arrayBuffer());
    },
    // …sending what the contract puts on the wire, as dependency.fetch does.
    'cockatiel wrap(bulkhead, circuitBreaker, retry) around fetch(url) with the two fields': async (
      url,
    ) => {
      const policy = await cockatielPolicy();
      const init = { headers: { 'spillway-criticality': 'critical', 'spillway-attempt': '1' } };
      return async () => policy.execute(async () => (await fetch(url, init)).arrayBuffer());
    },
  };
}

/**
 * cockatiel's `wrap(bulkhead, circuitBreaker, retry)` sized as a default dependency is: a
 * bulkhead of 64 in flight and 64 waiting (the cap), a breaker opening after 5 consecutive
 * failures for 5 s, and a retry of up to 3 attempts with exponential backoff; cockatiel's
 * defaults otherwise. One policy per case, as one dependency per case.
 */
async function cockatielPolicy() {
  const c = await import('cockatiel');
  return c.wrap(
    c.bulkhead(64, 64),
    c.circuitBreaker(c.handleAll, { halfOpenAfter: 5_000, breaker: new c.ConsecutiveBreaker(5) }),
    c.retry(c.handleAll, { maxAttempts: 2, backoff: new c.ExponentialBackoff() }),
  );
}

/** The name of the stub reference case of {@link stubCases}. */
export const stubReference = 'stub: a fetch answering at once (reference)';

/** A fetch-compatible function answering at once, always with the same (unread) response. */
function stubFetch() {
  const response = new Response('ok');
  return () => Promise.resolve(response);
}

/**
 * Spillway's own work, without the network: the same calls made to a fetch that answers at once
 * with a ready Response (no socket, no undici). A stub row minus the stub reference is what a
 * call adds to any fetch. Same options as {@link fetchCases}; the makers ignore their `url`.
 */
export function stubCases({ loadDependency, deadlineMs }) {
  const init = { headers: { 'spillway-criticality': 'critical', 'spillway-attempt': '1' } };
  return {
    [stubReference]: async () => {
      const stub = stubFetch();
      return async () => {
        await stub('http://127.0.0.1/', init);
      };
    },
    'stub: dependency({ name, baseUrl, fetch: stub }).fetch(path)': async () => {
      const dependency = await loadDependency();
      const dep = dependency({ name: 'bench', baseUrl: 'http://127.0.0.1/', fetch: stubFetch() });
      return async () => {
        await dep.fetch('/');
      };
    },
    'stub: dependency.fetch(path, undefined, { deadline, criticality })': async () => {
      const dependency = await loadDependency();
      const dep = dependency({ name: 'bench', baseUrl: 'http://127.0.0.1/', fetch: stubFetch() });
      const options = { deadline: deadlineMs, criticality: 'sheddable' };
      return async () => {
        await dep.fetch('/', undefined, options);
      };
    },
  };
}
