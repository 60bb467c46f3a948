// docs/postgres.md shows src/cli/serve/query-with-signal.ts as a recipe to copy (below its
// module comment): the page must show the code the PostgreSQL tests and the demo run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeBlocks, root } from '../helpers/markdown-blocks.js';

describe('docs/postgres.md', () => {
  it('shows query-with-signal.ts as it is', () => {
    const source = 'src/cli/serve/query-with-signal.ts';
    const shown = codeBlocks('docs/postgres.md').filter((b) => b.note === `source: ${source}`);
    expect(shown).toHaveLength(1);
    const code = readFileSync(join(root, source), 'utf8');
    const afterModuleComment = code.slice(code.indexOf(' */\n') + 4);
    expect(shown[0]!.code).toBe(afterModuleComment);
  });
});
