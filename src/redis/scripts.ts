/**
 * Every Lua script behind the Redis store, in one place: the rate scripts
 * (`rate-scripts.ts`), the semaphore scripts (`semaphore-scripts.ts`), and the shape they all
 * follow (`redis-script.ts`).
 *
 * @module
 */
export type { RedisScript } from './redis-script.js';
export { fixedWindowScript, gcraScript, slidingWindowScript } from './rate-scripts.js';
export {
  leaseMember,
  semAcquireScript,
  semReleaseScript,
  semRenewScript,
} from './semaphore-scripts.js';
