// docs/observability.md lists every channel, instrument and attribute Spillway has: a channel
// or an instrument added without its line in the docs fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { channelNames } from '../../src/channels/index.js';
import { attributeNames, instrumentNames, markNames } from '../../src/otel/index.js';

const doc = readFileSync(new URL('../../docs/observability.md', import.meta.url), 'utf8');

describe('docs/observability.md', () => {
  it.each([
    ['channel', Object.values(channelNames)],
    ['instrument', Object.values(instrumentNames)],
    ['attribute', Object.values(attributeNames)],
    ['trace mark', Object.values(markNames)],
  ])('names every %s', (_kind, names) => {
    for (const name of names) expect(doc, name).toContain(`\`${name}\``);
  });
});
