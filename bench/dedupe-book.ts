import type pg from 'pg';

/**
 * The book of bench:dedupe: the seeded book's syllable names and companies (bench/support.ts
 * seedContacts), with unique phone numbers (a shared number would be a true duplicate reason), and
 * a known share of planted duplicates of each kind, listed in `bench_planted (original, duplicate, kind)`,
 * every contact last changed a while ago (so that the book's pairs are kept from the changes the bench makes):
 * - email: the same person under another spelling of a Gmail address (no dots, a +tag, googlemail.com);
 * - phone: the same person with the number written nationally, `(415) 123-4567`, no e-mail;
 * - name: the same person at the same company with the name accented (Kalo → Káló) or mistyped
 *   (a letter doubled), no e-mail and no phone.
 */
const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'te', 'su', 'no', 'vi', 'be', 'do', 'pa', 'ri'];
const TAGS = ['vip', 'lead', 'partner', 'press', 'investor', 'customer', 'churned', 'trial', 'event', 'referral'];
export const KINDS = ['email', 'phone', 'name'] as const;

/** Writes `total` contacts, `share` of the originals planted once per kind; answers how many were planted per kind. */
export async function seedDedupeBook(client: pg.Client, total: number, share: number): Promise<number> {
  const originals = Math.round(total / (1 + KINDS.length * share));
  const every = Math.round(1 / share);
  const syllables = `array[${SYLLABLES.map((syllable) => `'${syllable}'`).join(',')}]`;
  const tags = `array[${TAGS.map((tag) => `'${tag}'`).join(',')}]`;
  const pick = (byte: number) => `(${syllables})[1 + get_byte(h, ${byte}) % ${SYLLABLES.length}]`;
  // One planted duplicate for rows g with g % every in 1..3 (email, phone, name).
  const kind = `(array['email', 'phone', 'name'])[g % ${every}]`;
  const names = `select g, md5('original' || g)::uuid as id, ${pick(0)} || ${pick(1)} as first,
      ${pick(2)} || ${pick(3)} || ${pick(4)} as last, ${pick(5)} || ${pick(6)} as company
    from (select g, decode(md5(g::text), 'hex') as h from generate_series(1, ${originals}) g) hashed`;
  await client.query('create table public.bench_planted (original uuid, duplicate uuid primary key, kind text)');
  await client.query(`
    insert into contacts.contact (id, first_name, last_name, email, phone, company, tags, created_at, updated_at)
    select id, initcap(first), initcap(last),
      first || '.' || last || g || '@' || case when g % 3 = 0 or g % ${every} = 1 then 'gmail.com' else company || '.example' end,
      '+1 415 ' || lpad(g::text, 7, '0'), initcap(company) || ' ' || (array['Inc', 'GmbH', 'Ltd', 'Labs'])[1 + g % 4],
      array[(${tags})[1 + g % ${TAGS.length}]], now() - g * interval '1 second', now() - g * interval '1 second'
    from (${names}) named`);
  await client.query(`
    with planted as (
      insert into contacts.contact (id, first_name, last_name, email, phone, company, tags, created_at, updated_at)
      select md5('planted' || g)::uuid,
        case when ${kind} = 'name' and g % 2 = 0 then translate(initcap(first), 'ao', 'áö') else initcap(first) end,
        case when ${kind} = 'name' and g % 2 = 1 then initcap(overlay(last placing substr(last, 3, 1) || substr(last, 3, 1) from 3 for 1))
          else initcap(last) end,
        case when ${kind} = 'email' then first || last || g || '+crm@' || (array['gmail.com', 'googlemail.com'])[1 + g / ${every} % 2] end,
        case when ${kind} = 'phone' then '(415) ' || substr(lpad(g::text, 7, '0'), 1, 3) || '-' || substr(lpad(g::text, 7, '0'), 4, 4) end,
        case when ${kind} = 'name' then initcap(company) || ' ' || (array['Inc', 'GmbH', 'Ltd', 'Labs'])[1 + g % 4] end,
        '{}', now() - interval '1 day', now() - interval '1 day'
      from (${names}) named where g % ${every} between 1 and ${KINDS.length}
      returning id)
    insert into public.bench_planted (original, duplicate, kind)
    select md5('original' || g)::uuid, md5('planted' || g)::uuid, ${kind}
    from generate_series(1, ${originals}) g where g % ${every} between 1 and ${KINDS.length}`);
  await client.query('vacuum analyze contacts.contact');
  await client.query('checkpoint');
  const { rows } = await client.query<{ planted: string }>('select count(*) as planted from public.bench_planted');
  return Math.round(Number(rows[0].planted) / KINDS.length);
}

/** Recall and precision per kind over the book's pairs (the default threshold): planted pairs found, found pairs planted. */
export async function recallAndPrecision(
  client: pg.Client,
): Promise<{ kind: string; planted: number; found: number; recall: number; flagged: number; precision: number }[]> {
  const { rows } = await client.query<{
    kind: string;
    planted: string;
    found: string;
    flagged: string;
    right: string;
  }>(`
    with pairs as (select a_id, b_id, reasons from contacts.contact_duplicate_pair),
    truth as (select least(original, duplicate) as a, greatest(original, duplicate) as b, kind from public.bench_planted),
    kinds (kind, reason) as (values ('email', 'EMAIL'), ('phone', 'PHONE'), ('name', 'NAME'))
    select kinds.kind,
      (select count(*) from truth where truth.kind = kinds.kind) as planted,
      (select count(*) from truth join pairs on pairs.a_id = truth.a and pairs.b_id = truth.b where truth.kind = kinds.kind) as found,
      (select count(*) from pairs where kinds.reason = any(pairs.reasons)) as flagged,
      (select count(*) from pairs join truth on pairs.a_id = truth.a and pairs.b_id = truth.b where kinds.reason = any(pairs.reasons)) as right
    from kinds`);
  return rows.map((row) => ({
    kind: row.kind,
    planted: Number(row.planted),
    found: Number(row.found),
    recall: Number(row.found) / Math.max(1, Number(row.planted)),
    flagged: Number(row.flagged),
    precision: Number(row.right) / Math.max(1, Number(row.flagged)),
  }));
}
