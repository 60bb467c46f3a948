// The cases of bench/quota.js, shared with its instruction count
// (bench/diagnostics/quota-instructions.js): the guard's whole admission of one request on a
// route with one quota policy, two, two with a number per client, none, each over 10,000
// client keys visited round-robin; and the route's quota decision alone. Not run on its own,
// except as the child the instruction count runs under valgrind (`node quota-cases.js CASE`).
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const keys = Array.from({ length: 10_000 }, (_, i) => `client-${i}`);
/** A plan per client, as a function of its key would look it up: two tiers. */
const perHour = ({ key }) => (key.endsWith('7') ? 1_000_000 : 500_000);

// Numbers of the size quotas have (the fields print them: a count in the billions costs more
// to format than one in the tens), with a refill that keeps every request admitted: a key comes
// back every 10,000 requests, its second's bucket full again, and a run never spends an hour's.
const second = { name: 'second', ratePerSec: 1e6, burst: 50 };
export const quotas = {
  'one fixed policy': { ratePerSec: 1e6, burst: 50 },
  'two policies, one number per client': [
    second,
    { name: 'hour', perWindow: perHour, windowMs: 3_600_000 },
  ],
  'two fixed policies': [second, { name: 'hour', perWindow: 1_000_000, windowMs: 3_600_000 }],
};

/** Admission cases by name: [quota, extra guard options]. The first is the baseline. */
export const admitCases = {
  'one fixed policy': [quotas['one fixed policy'], {}],
  'two policies, one number per client': [quotas['two policies, one number per client'], {}],
  'two fixed policies': [quotas['two fixed policies'], {}],
  'one fixed policy, RateLimit fields on refusals only': [
    quotas['one fixed policy'],
    { rateLimitHeaders: 'refusals-only' },
  ],
  'no quota (reference)': [false, {}],
};

/** The modules a case needs, from the build in `dist`. */
export async function load(dist) {
  const built = (path) => import(pathToFileURL(join(dist, path)).href);
  const [{ admission }, { systemClock }, { RouteQuota }, { quotaSpec }] = await Promise.all([
    built('node/index.js'),
    built('index.js'),
    built('node/route-quota.js'),
    built('node/quota-options.js'),
  ]);
  return { admission, systemClock, RouteQuota, quotaSpec };
}

/** A request and its response, without a socket: what admission reads and writes. */
function exchange() {
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  req.url = '/orders';
  return { req, res: new ServerResponse(req) };
}

/** One admitted request per call: the guard's `admit`, then `finish`. */
export function admitOne(lib, name) {
  const [quota, extra] = admitCases[name];
  let i = 0;
  const guard = lib.admission({
    limit: 100,
    penaltyBox: false,
    key: () => keys[i],
    ...(quota === false ? {} : { quota }),
    ...extra,
  });
  const { req, res } = exchange();
  return () => {
    i = (i + 1) % keys.length;
    const result = guard.admit(req, res);
    result.context.finish('ok');
    return result.admitted;
  };
}

/** One quota decision per call, the RateLimit field formatted for the response. */
export function decideOne(lib, name) {
  const q = new lib.RouteQuota(lib.quotaSpec(quotas[name], 'api', 'api.quota'), {
    route: 'api',
    clock: lib.systemClock,
    headers: 'always',
  });
  const { req } = exchange();
  let i = 0;
  return () => q.decide(keys[(i = (i + 1) % keys.length)], req).ok;
}

// As the child of the instruction count: warm up, say so, run when told, say so, then wait.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [kind, name, dist, warmup, calls] = process.argv.slice(2);
  const lib = await load(dist);
  const one = kind === 'decide' ? decideOne(lib, name) : admitOne(lib, name);
  for (let k = 0; k < Number(warmup); k++) one();
  process.send({ ready: true });
  // A listener kept (not `once`): with none, Node lets go of the IPC channel and the process
  // exits, racing the count's dump request.
  let ran = false;
  process.on('message', () => {
    if (ran) return;
    ran = true;
    for (let k = 0; k < Number(calls); k++) one();
    process.send({ done: true });
  });
}
