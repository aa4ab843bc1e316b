/** Request schemas of the job endpoints. */
import { Type, type Static } from '@sinclair/typebox';
import { JobState } from '../../core/model.ts';
import { LimitQuery, StringEnum } from './common.ts';

/** `GET /v1/jobs` query: oldest first. */
export const ListJobsQuery = Type.Object(
  {
    queue: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    state: Type.Optional(StringEnum(JobState)),
    runId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ...LimitQuery.properties,
  },
  { additionalProperties: false },
);
export type ListJobsQuery = Static<typeof ListJobsQuery>;
