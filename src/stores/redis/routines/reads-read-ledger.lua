-- reads-read-ledger: the ledger entries of a run, in completion order.
-- Keys: runledger:<runId> (the entries' keys, in order), ledger:<key>.
-- ARGV[2] = run id.
-- Result: [flat LedgerEntry hash, ...] (empty for an unknown run).
-- Invariant: reads only.
local entries = {}
for _, key in ipairs(redis.call('LRANGE', k_runledger(ARGV[2]), 0, -1)) do
  local e = JOBS.ledger_get(key)
  if e then
    entries[#entries + 1] = { 'key', key, 'runId', e.runId, 'stage', e.stage, 'kind', e.kind, 'output', e.output, 'completedAt', e.completedAt }
  end
end
return ok(entries)
