/**
 * The registry of `spillway` subcommands: name → loader. Add a line here for a new command.
 *
 * @module
 */
import type { Command } from './command.js';

export const commands: Readonly<Record<string, () => Promise<Command>>> = {
  demo: async () => (await import('./demo.js')).demo,
  serve: async () => (await import('./serve.js')).serve,
  load: async () => (await import('./load.js')).command,
  sim: async () => (await import('./sim.js')).command,
};
