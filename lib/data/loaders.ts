import DataLoader from 'dataloader';

/**
 * A request's DataLoader over a batch query that answers a Map by key: one query for every key
 * asked in the same tick. A key the query leaves out (unknown, or out of the caller's reach) gets
 * `missing()`.
 */
export function batchLoader<Value>(
  query: (keys: readonly string[]) => Promise<Map<string, Value>>,
  missing: () => Value,
): DataLoader<string, Value> {
  return new DataLoader(async (keys) => {
    const found = await query(keys);
    return keys.map((key) => found.get(key) ?? missing());
  });
}
