import { AppError } from '../errors.js';

/**
 * The graph names enum values in UPPER_CASE (`NEEDS_RECONNECT`, GraphQL's own convention); the legacy
 * REST bodies carry the same words in lower case (`needs_reconnect`) and must keep them. The two are
 * the same word in another case in every service, so one translation at the adapters' edge serves all.
 */

/** An object with the named fields in REST's lower case. */
export type WithRestEnums<Item, Key extends keyof Item> = {
  [Field in keyof Item]: Field extends Key ? RestEnum<Item[Field]> : Item[Field];
};

type RestEnum<Value> = Value extends readonly (infer Item)[]
  ? RestEnum<Item>[]
  : Value extends string
    ? Lowercase<Value>
    : Value;

/** A GraphQL enum value as a REST body writes it (`API_KEY` → `api_key`), a list value by value; `null` stays `null`. */
export function restEnum<Value extends string | readonly string[] | null | undefined>(value: Value): RestEnum<Value> {
  if (Array.isArray(value)) return value.map((item: string) => item.toLowerCase()) as RestEnum<Value>;
  return (typeof value === 'string' ? value.toLowerCase() : value) as RestEnum<Value>;
}

/** A copy of `item` with the named enum fields in REST's lower case. */
export function withRestEnums<Item extends object, Key extends keyof Item>(
  item: Item,
  ...keys: Key[]
): WithRestEnums<Item, Key> {
  const copy = { ...item } as Record<PropertyKey, unknown>;
  for (const key of keys) copy[key] = restEnum(copy[key] as string | string[] | null | undefined);
  return copy as WithRestEnums<Item, Key>;
}

/** The lower-case words of a REST contract: only these become GraphQL enum values. */
const REST_ENUM_WORD = /^[a-z][a-z0-9_]*$/;

/**
 * A REST enum word as the graph names it (`needs_reconnect` → `NEEDS_RECONNECT`); a list word by
 * word. Anything else is passed on as it came (`Draft`, `7`), for GraphQL to refuse by the name of
 * its variable, as it did before the graph's values were upper case.
 */
export function graphqlEnum(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(graphqlEnum);
  return typeof value === 'string' && REST_ENUM_WORD.test(value) ? value.toUpperCase() : value;
}

/** A REST body with the named enum fields as the graph names them; any other field as it came. */
export function withGraphQLEnums(body: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  const copy = { ...body };
  for (const key of keys) if (key in copy) copy[key] = graphqlEnum(copy[key]);
  return copy;
}

/**
 * A list of names a legacy REST contract read leniently (any case, spaces around: `[" Mastodon ", "X"]`)
 * as values of the graph's enum (`["MASTODON", "X"]`), for an enum whose set is known to the adapter
 * (`values`, the generated constant of the enum). A name of none of them is refused here as the service
 * refused it before its field was an enum: a 400 on `field` itself (not an item of it, not a variable)
 * naming the first few such names. Anything but a list is passed on as it came (`null` clears the
 * field; the body's shape was checked before).
 */
export function graphqlEnumList<Value extends string>(
  value: unknown,
  values: Record<string, Value>,
  field: string,
  what: string,
): unknown {
  if (!Array.isArray(value)) return value;
  const known = new Set<string>(Object.values(values));
  const names = (value as unknown[]).map((name) => (typeof name === 'string' ? name.trim().toUpperCase() : name));
  const unknown = [...new Set(names.filter((name) => typeof name !== 'string' || !known.has(name)))];
  if (!unknown.length) return names;
  const named = unknown.slice(0, 3).map((name) => String(name).toLowerCase());
  throw AppError.badInput(field, `contains names that are not ${what}: ${named.join(', ')}`);
}

/**
 * The value of the graph's enum (`values`, its generated constant) whose REST word is exactly `word`
 * (`mastodon` → `MASTODON`), as a path names it; undefined when it names none.
 */
export function graphqlEnumOfWord<Value extends string>(
  values: Record<string, Value>,
  word: string,
): Value | undefined {
  return Object.values(values).find((value) => restEnum(value) === word);
}
