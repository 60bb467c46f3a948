#!/usr/bin/env node
// Empties dist/ before a build, so nothing a former build emitted (a file since renamed or
// removed, a source map from before maps were turned off) is left to be packed.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
