// The S8 servers (each a case of lib/http-servers.js) in the order the tables list them, and the
// choice `--only` makes among them; shared by bench/http-cost.js and the instruction count.

export const httpCases = [
  'bare 200',
  'bare 503',
  'bare 503 + problem+json',
  'spillway node 200',
  'spillway node 429',
  'spillway node 503',
  'spillway node 200 no storm',
  'spillway node 503 no storm',
  'spillway node 429 ignored',
  'spillway node 429 serve bounded',
  'spillway node 429 serve bounded refused only',
  'spillway node 200 + context',
  'spillway node 429 + context',
  'spillway node 503 + context',
  'spillway node 200 + otel',
  'spillway node 429 + otel',
  'spillway node 503 + otel',
  'bare express 503',
  'bare fastify 503',
  'spillway express 429',
  'spillway express 503',
  'spillway fastify 429',
  'spillway fastify 503',
  'bare koa 503',
  'spillway koa 429',
  'spillway koa 503',
  'bare hono 503',
  'spillway hono 429',
  'spillway hono 503',
  'express-rate-limit 8 429',
  '@fastify/rate-limit 11 429',
  '@fastify/under-pressure 9 503',
  'cockatiel 3 bulkhead 503',
];

/**
 * The cases whose names contain one of the comma-separated substrings of `only`, or equal one
 * written `=name` (all of them when `only` is undefined); the bare 503 every ratio is taken
 * against always stays in.
 */
export function pickHttpCases(only) {
  const wanted = only?.split(',');
  const matches = (c, w) => (w.startsWith('=') ? c === w.slice(1) : c.includes(w));
  return wanted
    ? httpCases.filter((c) => c === 'bare 503' || wanted.some((w) => matches(c, w)))
    : httpCases;
}
