/**
 * Crash (a): a worker SIGKILLed after the render stage wrote its outputs (objects stored, cache
 * entries ready) and before its commit; see asset-crash.ts for what is checked. SQLite and PostgreSQL.
 */
import { describeAssetCrash } from './asset-crash.ts';

describeAssetCrash('render');
