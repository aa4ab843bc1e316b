/**
 * Redis stores for tests, each under a key prefix of its own on this process's Redis (see
 * redis-server.ts), closed and its keys deleted when the test is done: `useRedisStores` for test
 * files that open stores themselves, `redisStoreHarness` for the conformance suite,
 * `createRedisTestStore` (with `stopRedisAfterAll`) for harnesses that close their stores
 * themselves (the HTTP and end-to-end tests).
 */
import { after, afterEach } from 'node:test';
import { Redis } from 'ioredis';
import type { FakeClock } from '../../src/core/clock.ts';
import type { IdGenerator } from '../../src/core/ids.ts';
import type { Store } from '../../src/core/ports/store.ts';
import { createRedisStore, keyPrefix, type RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.ts';
import type { StoreHarness } from '../conformance/store-suite.ts';
import { createStoreName, sharedRedis } from './redis-server.ts';

/** Deletes every key of store `name`. */
export async function deleteStoreKeys(admin: Redis, name: string): Promise<void> {
  const stream = admin.scanStream({ match: `${keyPrefix(name)}*`, count: 1000 });
  for await (const keys of stream as AsyncIterable<string[]>) {
    if (keys.length > 0) await admin.unlink(...keys);
  }
}

/** What {@link useRedisStores} gives a test file. */
export interface RedisTestStores {
  /** The URL of this process's Redis. */
  url(): Promise<string>;
  /** A plain connection for setting up and checking keys. */
  admin(): Promise<Redis>;
  /** A store, closed and its keys deleted after the test; a new name unless `options.name` is given. */
  open(options?: Partial<RedisStoreOptions>): Promise<RedisStore>;
}

/** Stores for the tests of one `describe` (call it in the `describe` body). */
export function useRedisStores(): RedisTestStores {
  const opened: Store[] = [];
  const names = new Set<string>();
  let admin: Redis | undefined;
  const url = async (): Promise<string> => (await sharedRedis()).url;
  const adminConnection = async (): Promise<Redis> => (admin ??= new Redis(await url(), { maxRetriesPerRequest: 2 }));

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    const connection = await adminConnection();
    for (const name of names) await deleteStoreKeys(connection, name);
    names.clear();
  });
  after(async () => {
    admin?.disconnect();
    await (await sharedRedis()).stop();
  });
  return {
    url,
    admin: adminConnection,
    async open(options = {}) {
      const name = options.name ?? createStoreName();
      names.add(name);
      const store = createRedisStore({ url: await url(), ...options, name });
      opened.push(store);
      return store;
    },
  };
}

/**
 * A conformance harness whose stores each get a new name (keys deleted by `destroy`) and the
 * suite's fake clock as their test clock. `end` closes the admin connection and stops the server.
 */
export function redisStoreHarness(): StoreHarness & { end(): Promise<void> } {
  const names = new WeakMap<Store, string>();
  let admin: Redis | undefined;
  return {
    create: async ({ clock, ids }: { clock: FakeClock; ids: IdGenerator }) => {
      const name = createStoreName();
      const store = createRedisStore({ url: (await sharedRedis()).url, name, clock, ids });
      names.set(store, name);
      return store;
    },
    destroy: async (store) => {
      await store.close();
      const name = names.get(store);
      admin ??= new Redis((await sharedRedis()).url, { maxRetriesPerRequest: 2 });
      if (name !== undefined) await deleteStoreKeys(admin, name);
    },
    end: async () => {
      admin?.disconnect();
      await (await sharedRedis()).stop();
    },
  };
}

/** A store of {@link createRedisTestStore}: the caller closes it, then calls `destroy`. */
export interface RedisTestStore {
  store: RedisStore;
  /** The store's name (its key prefix is `kiln:{<name>}:`). */
  name: string;
  /** The URL of this process's Redis. */
  url: string;
  /** The URL that selects this store in a kiln process (`--store`, `KILN_STORE`): `url` plus `?name=<name>`. */
  storeUrl: string;
  /** Runs `fn` over a plain connection of its own (closed afterwards), for checks under the store's keys. */
  withConnection<T>(fn: (redis: Redis) => Promise<T>): Promise<T>;
  /** Deletes the store's keys (call it after `store.close()`). */
  destroy(): Promise<void>;
}

let serverUsed = false;

/** This process's Redis (started on first use), stopped by {@link stopRedisAfterAll}. */
export function testRedis(): ReturnType<typeof sharedRedis> {
  serverUsed = true;
  return sharedRedis();
}

/**
 * A store under a new name on this process's Redis, for code that closes its stores itself;
 * `destroy` deletes its keys over a connection of its own. Pair with {@link stopRedisAfterAll}.
 */
export async function createRedisTestStore(options: Partial<RedisStoreOptions> = {}): Promise<RedisTestStore> {
  const { url } = await testRedis();
  const name = options.name ?? createStoreName();
  const store = createRedisStore({ url, ...options, name });
  const storeUrl = new URL(url);
  storeUrl.searchParams.set('name', name);
  const withConnection = async <T>(fn: (redis: Redis) => Promise<T>): Promise<T> => {
    const redis = new Redis(url, { maxRetriesPerRequest: 2 });
    try {
      return await fn(redis);
    } finally {
      redis.disconnect();
    }
  };
  return { store, name, url, storeUrl: storeUrl.href, withConnection, destroy: () => withConnection((redis) => deleteStoreKeys(redis, name)) };
}

/**
 * Stops this process's Redis after the last test of the file, if {@link testRedis} started it (its child process would otherwise keep the test process alive). Call it at the top
 * level of a test file, or from a function that test files call there.
 */
export function stopRedisAfterAll(): void {
  after(async () => {
    if (serverUsed) await (await sharedRedis()).stop();
  });
}
