/**
 * The store servers a test may take down and bring back (an outage), one shape for each: the
 * private PostgreSQL cluster and the private redis-server of this test process. A server named by
 * `KILN_PG_URL` / `KILN_REDIS_URL` belongs to someone else and is never stopped (`owned()` is
 * false; the test skips its outage). A test file using Redis calls `stopRedisAfterAll()`.
 */
import { canRestartPostgres, postgresSkipReason, sharedPostgres, startStoppedPostgres, stopPostgresForOutage } from './postgres-cluster.ts';
import { canRestartRedis, redisSkipReason, startStoppedRedis, stopRedisForOutage } from './redis-server.ts';
import { testRedis } from './redis-stores.ts';

/** One server of this process that a test can stop and start again. */
export interface OutageServer {
  name: string;
  /** Why tests of this server are skipped here, or undefined when they run. */
  skip: string | undefined;
  /** Starts (or joins) the server; true when this process owns it and so may stop it. */
  owned(): Promise<boolean>;
  /** Stops it, keeping its data (PostgreSQL: `pg_ctl stop -m fast`; Redis: SIGKILL, its AOF kept). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
}

/** PostgreSQL and Redis (evaluated once per test file: the skip checks print their reasons). */
export function outageServers(): { postgres: OutageServer; redis: OutageServer } {
  return {
    postgres: {
      name: 'PostgreSQL',
      skip: postgresSkipReason(),
      owned: () => sharedPostgres().then(canRestartPostgres),
      stop: stopPostgresForOutage,
      start: startStoppedPostgres,
    },
    redis: {
      name: 'Redis',
      skip: redisSkipReason(),
      owned: () => testRedis().then(canRestartRedis),
      stop: stopRedisForOutage,
      start: startStoppedRedis,
    },
  };
}
