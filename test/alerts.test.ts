// The Prometheus alerting rules shipped in docs/alerts/ are valid and behave as documented:
// `promtool check rules` accepts them and `promtool test rules` runs each alert against series
// that should fire it and series that should not. Needs promtool (Debian's `prometheus`
// package; .ci/run installs it).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dir = fileURLToPath(new URL('../docs/alerts/', import.meta.url));

function promtool(...args: string[]): string {
  try {
    return execFileSync('promtool', args, { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const e = error as { code?: string; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') {
      throw new Error("promtool is not installed: install Debian's prometheus package", {
        cause: error,
      });
    }
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`, {
      cause: error,
    });
  }
}

describe('docs/alerts: the alerting rules', () => {
  it('pass promtool check rules', () => {
    expect(promtool('check', 'rules', 'spillway.rules.yml')).toMatch(/SUCCESS: 5 rules found/);
  });

  it('fire where they should and nowhere else (promtool test rules)', () => {
    expect(promtool('test', 'rules', 'spillway.rules.test.yml')).toMatch(/SUCCESS/);
  });
});
