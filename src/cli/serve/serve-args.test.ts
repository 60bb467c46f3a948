import { describe, expect, it } from 'vitest';
import { UsageError } from '../command.js';
import { integerFlag, isLoopbackHost, parseServeArgs } from './serve-args.js';

describe('integerFlag', () => {
  const port = { min: 0, max: 65_535, fallback: 0 };
  it('reads plain digits within the range, and the fallback when absent', () => {
    expect(integerFlag('port', '8080', port)).toBe(8080);
    expect(integerFlag('port', '0', port)).toBe(0);
    expect(integerFlag('port', undefined, { ...port, fallback: 3000 })).toBe(3000);
  });

  it("refuses what Number() would quietly read: '' is not 0", () => {
    for (const bad of ['', ' ', ' 80', '80 ', '1e3', '0x50', '80.0', '-1', '65536', 'abc']) {
      expect(() => integerFlag('port', bad, port)).toThrow(UsageError);
      expect(() => integerFlag('port', bad, port)).toThrow(
        `--port must be a whole number from 0 to 65535, got '${bad}'`,
      );
    }
  });
});

describe('isLoopbackHost', () => {
  it('knows loopback addresses in every spelling, and nothing else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '0:0:0:0:0:0:0:1', 'localhost']) {
      expect(isLoopbackHost(host)).toBe(true);
    }
    expect(isLoopbackHost('::ffff:127.0.0.1')).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '::ffff:10.0.0.1', 'example.com', '']) {
      expect(isLoopbackHost(host)).toBe(false);
    }
  });
});

describe('parseServeArgs', () => {
  it('fills the defaults: loopback, any free port', () => {
    expect(parseServeArgs(['bounded'])).toEqual({
      options: {
        mode: 'bounded',
        framework: 'node',
        work: 'db',
        connections: 10,
        serviceMs: 30,
        clientRatePerSec: 150,
        clientBurst: 15,
      },
      listen: { port: 0, host: '127.0.0.1' },
    });
  });

  it('refuses a non-loopback --host while the admin route is served, unless asked', () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.7', 'example.com']) {
      expect(() => parseServeArgs(['bounded', '--host', host])).toThrow(
        `--host '${host}' is not a loopback address, and /admin/service-ms has no authentication`,
      );
      expect(parseServeArgs(['naive', '--host', host, '--allow-remote-admin']).listen.host).toBe(
        host,
      );
    }
    // Express and Fastify servers have no admin route: nothing to protect.
    expect(
      parseServeArgs(['bounded', '--framework', 'fastify', '--host', '0.0.0.0']).listen,
    ).toEqual({ port: 0, host: '0.0.0.0' });
  });

  it('reads every count strictly, naming the flag', () => {
    const cases: [string[], string | RegExp][] = [
      [['bounded', '--port', ''], "--port must be a whole number from 0 to 65535, got ''"],
      [['bounded', '--connections', '0'], '--connections must be a whole number from 1'],
      [['bounded', '--service-ms', '60001'], '--service-ms must be a whole number from 1 to 60000'],
      [['bounded', '--client-rate', ''], '--client-rate must be a whole number from 1'],
      [['bounded', '--client-burst', '1.5'], '--client-burst must be a whole number'],
      [['bounded', '--limit', ''], '--limit must be a whole number from 1'],
      [
        ['bounded', '--redis', 'redis://127.0.0.1:6379', '--replicas', ''],
        '--replicas must be a whole number from 1',
      ],
      [['bounded', '--redis', 'localhost'], '--redis must be a redis:// URL'],
      [
        ['naive', '--pg', '127.0.0.1:5432'],
        "--pg must be a postgres:// URL such as postgres://postgres@127.0.0.1:5432/test, got '127.0.0.1:5432'",
      ],
      [
        ['naive', '--pg', 'postgres://h/db', '--work', 'cpu'],
        '--pg is the database: it applies to --work db',
      ],
      // Node's advice on positionals that start with '-' is left out: it buries the mistake.
      [['bounded', '--frobnicate'], /^unknown option '--frobnicate'$/],
      [['bounded', '--port'], /^option '--port <value>' argument missing$/],
      [[], "missing the mode: naive, bounded or bulkhead, as in 'spillway serve bounded'"],
      [['fast'], "the mode must be naive, bounded or bulkhead, got 'fast'"],
      [['naive', 'bounded'], 'expected one mode, got 2: naive bounded'],
    ];
    for (const [argv, message] of cases) {
      expect(() => parseServeArgs(argv)).toThrow(UsageError);
      expect(() => parseServeArgs(argv)).toThrow(message);
    }
    expect(parseServeArgs(['bounded', '--limit', 'adaptive']).options.limit).toBe('adaptive');
    expect(parseServeArgs(['bounded', '--port', '8080']).listen.port).toBe(8080);
    for (const url of ['postgres://postgres@127.0.0.1:5432/test', 'postgresql://h/db']) {
      expect(parseServeArgs(['naive', '--pg', url]).options.postgresUrl).toBe(url);
    }
  });

  it('takes --decisions on the bounded node server only', () => {
    expect(parseServeArgs(['bounded', '--decisions']).options.decisions).toBe(true);
    expect(parseServeArgs(['bounded']).options.decisions).toBeUndefined();
    for (const argv of [
      ['naive', '--decisions'],
      ['bulkhead', '--decisions'],
      ['bounded', '--framework', 'express', '--decisions'],
    ]) {
      expect(() => parseServeArgs(argv)).toThrow(
        '--decisions applies to the bounded server on --framework node',
      );
    }
  });

  it('takes a slow path on any server and tenant shares on the bounded one, strictly', () => {
    expect(parseServeArgs(['bulkhead', '--slow-ms', '600']).options.slowMs).toBe(600);
    expect(parseServeArgs(['bounded', '--tenant-share', '0.3']).options.tenantShare).toBe(0.3);
    expect(parseServeArgs(['bounded', '--tenant-share', '1']).options.tenantShare).toBe(1);
    expect(parseServeArgs(['bounded', '--tenant-share', '.5']).options.tenantShare).toBe(0.5);
    const cases: [string[], string][] = [
      [['naive', '--slow-ms', '0'], '--slow-ms must be a whole number from 1 to 60000'],
      [['naive', '--slow-ms', '600', '--work', 'cpu'], '--slow-ms is a slow query'],
      [['naive', '--tenant-share', '0.3'], '--tenant-share applies to the bounded server'],
    ];
    for (const bad of ['0', '0.0', '1.5', '', '3', '1e-1', '0.', ' 0.3', '0.1234567']) {
      cases.push([
        ['bounded', '--tenant-share', bad],
        `--tenant-share must be a fraction in (0, 1] such as 0.3, got '${bad}'`,
      ]);
    }
    for (const [argv, message] of cases) {
      expect(() => parseServeArgs(argv)).toThrow(UsageError);
      expect(() => parseServeArgs(argv)).toThrow(message);
    }
  });
});
