// Lint rules, including the layering that keeps src/core framework- and time-free
// (DESIGN.md §3): each folder may import only the folders below it. src/http is neutral HTTP
// semantics (header codecs, the refusal table) with no transport, so the caller side (client)
// and the load generator read headers through it rather than keep codecs of their own.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const folders = [
  'core',
  'http',
  'channels',
  'node',
  'express',
  'fastify',
  'koa',
  'hono',
  'client',
  'grpc',
  'redis',
  'stream',
  'amqp',
  'nats',
  'load',
  'sim',
  'testing',
  'otel',
  'cli',
];

/** Which Spillway folders each folder may import (importer → imported). */
const allowed = {
  core: [],
  http: ['core'],
  // The registry of diagnostics channels: every publisher imports it, it imports only types.
  channels: ['core', 'http'],
  node: ['core', 'http', 'channels'],
  express: ['core', 'http', 'node'],
  fastify: ['core', 'http', 'node'],
  koa: ['core', 'http', 'node'],
  hono: ['core', 'http', 'node'],
  client: ['core', 'http', 'channels'],
  // gRPC: the node guard's decisions over a stand-in request, and the client's dependency().
  grpc: ['core', 'http', 'channels', 'node', 'client'],
  redis: ['core', 'channels'],
  // Async iterables and Node streams: core's primitives, with node:stream; no transport.
  stream: ['core'],
  // RabbitMQ: lag source, permit consumer, confirm publisher over the app's amqplib (typed by shape).
  amqp: ['core'],
  // NATS JetStream: lag source, permit consumer, typed publisher over the app's client (by shape).
  nats: ['core'],
  load: ['core', 'http'],
  // The simulator runs the real caller (client) and passes refusals up as the guard would (http).
  sim: ['core', 'http', 'client'],
  testing: ['core'],
  // Metrics and trace marks from the channels; guards and dependencies only as types to observe.
  otel: ['core', 'http', 'channels', 'node', 'client'],
  cli: [
    'core',
    'http',
    'channels',
    'node',
    'express',
    'fastify',
    'client',
    'redis',
    'amqp',
    'nats',
    'load',
    'sim',
    'testing',
    'otel',
  ],
};

const frameworks = [
  'express',
  'fastify',
  'koa',
  'hono',
  '@hono/*',
  'ioredis',
  'redis',
  '@redis/*',
  'undici',
  'amqplib',
  '@nats-io/*',
  '@grpc/*',
];
const transports = [
  'node:http',
  'node:https',
  'node:http2',
  'node:net',
  'node:tls',
  'http',
  'https',
  'net',
];

/** Adapters that use the public core API only (and core/internal/validate.js). */
const publicCoreOnly = [
  'express',
  'fastify',
  'koa',
  'hono',
  'grpc',
  'redis',
  'stream',
  'amqp',
  'nats',
];

function layerRule(folder) {
  const forbidden = folders.filter((f) => f !== folder && !allowed[folder].includes(f));
  const patterns = [];
  if (forbidden.length > 0) {
    patterns.push({
      group: forbidden.flatMap((f) => [`../${f}/*`, `../../${f}/*`, `../../${f}/**`, `../${f}/**`]),
      message: `src/${folder} may import only: ${allowed[folder].join(', ') || 'nothing outside itself'} (DESIGN.md §3)`,
    });
  }
  if (folder === 'core' || folder === 'http') {
    patterns.push({
      group: [...transports, ...frameworks],
      message: `src/${folder} must stay framework- and transport-free; put this in an adapter folder`,
    });
  }
  if (publicCoreOnly.includes(folder)) {
    // …but for the option validators, so every factory words a bad option the same way.
    patterns.push({
      group: ['../core/internal/*', '../../core/internal/*', '!../core/internal/validate.js'],
      message: 'adapters use the public core API only (and core/internal/validate.js)',
    });
  }
  if (patterns.length === 0) return {};
  return {
    files: [`src/${folder}/**/*.ts`],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  };
}

const timeMessage = 'src/core reads time only through the injected Clock (see src/core/clock)';

const noEnum = { selector: 'TSEnumDeclaration', message: 'use a string union instead of an enum' };
/**
 * V8's parser marks a function literal assigned straight to a property (`obj.f = () => …`) to
 * be allocated in the old generation; below TurboFan it is, and it keeps all it closes over
 * alive through every young collection until a full one (docs/redis.md, "Node 24 and 25 with
 * ioredis": ioredis's commands do this, and cost the store's p99 its first seconds on Node 24).
 */
const noPretenuredClosure = {
  selector:
    "AssignmentExpression[left.type='MemberExpression'][right.type=/^(Arrow)?FunctionExpression$/]",
  message:
    'V8 allocates a function literal assigned straight to a property in the old generation, ' +
    'keeping what it closes over alive through young collections: make it a local first',
};

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', 'test-artifacts/**', '.bench/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      'max-params': ['error', 3],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      'no-restricted-syntax': ['error', noEnum],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-syntax': ['error', noEnum, noPretenuredClosure] },
  },
  ...folders.map(layerRule),
  {
    files: ['src/core/**/*.ts'],
    ignores: ['src/core/clock/clock.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...[
          'setTimeout',
          'setInterval',
          'setImmediate',
          'clearTimeout',
          'clearInterval',
          'performance',
        ].map((name) => ({ name, message: timeMessage })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: timeMessage },
        { object: 'performance', property: 'now', message: timeMessage },
        { object: 'AbortSignal', property: 'timeout', message: timeMessage },
        { object: 'globalThis', property: 'performance', message: timeMessage },
      ],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:timers', 'node:timers/*', 'timers', 'node:perf_hooks'],
              message: timeMessage,
            },
            {
              group: [...transports, ...frameworks],
              message: 'core must stay framework- and transport-free',
            },
            {
              group: folders
                .filter((f) => f !== 'core')
                .flatMap((f) => [`../../${f}/*`, `../../${f}/**`]),
              message: 'src/core may import nothing outside itself (DESIGN.md §3)',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      'max-params': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: globals.node,
    },
  },
);
