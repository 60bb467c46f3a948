// The gRPC cost bench's servers (each a case of lib/grpc-servers.js) in the order its table lists
// them, and the choice `--only` makes among them.

/** The case every ratio is taken against: the cheapest hand-written refusal. */
export const grpcBase = 'bare UNAVAILABLE + pushback';

export const grpcCases = [
  'bare OK',
  grpcBase,
  'bare RESOURCE_EXHAUSTED + pushback',
  'bare interceptor OK',
  'bare interceptor UNAVAILABLE + pushback',
  'spillway unary OK',
  'spillway unary RESOURCE_EXHAUSTED',
  'spillway unary UNAVAILABLE',
  'spillway unary OK + context',
  'spillway interceptor OK',
  'spillway interceptor RESOURCE_EXHAUSTED',
  'spillway interceptor UNAVAILABLE',
  'spillway interceptor + unary OK',
  'rate-limiter-flexible 11 RESOURCE_EXHAUSTED',
  'cockatiel 3 bulkhead UNAVAILABLE',
];

/**
 * The cases whose names contain one of the comma-separated substrings of `only` (all of them
 * when `only` is undefined); the base every ratio is taken against always stays in.
 */
export function pickGrpcCases(only) {
  const wanted = only?.split(',');
  return wanted
    ? grpcCases.filter((c) => c === grpcBase || wanted.some((w) => c.includes(w)))
    : grpcCases;
}
