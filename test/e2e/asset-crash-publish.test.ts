/**
 * Crash (b): a worker SIGKILLed during publish, after the handler handed its publications to the
 * commit and before the commit ran; see asset-crash.ts for what is checked. SQLite and PostgreSQL.
 */
import { describeAssetCrash } from './asset-crash.ts';

describeAssetCrash('publish');
