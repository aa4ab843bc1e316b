/** Request schemas of the queue endpoints. */
import { Type, type Static } from '@sinclair/typebox';

/** `:queue` — `<pipeline>.<stage>`. */
export const QueueParams = Type.Object({
  queue: Type.String({ minLength: 1, maxLength: 300, pattern: '^[A-Za-z0-9_.-]+$' }),
});
export type QueueParams = Static<typeof QueueParams>;
