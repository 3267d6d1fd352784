/**
 * The floor of the benchmarks: `GET /api/contacts/{id}`, the search of `GET /api/contacts`,
 * `POST /api/contacts` and `PUT /api/contacts/{id}` written by hand with Express 5 and `pg`, on the
 * project's own `contacts.contact` table with bind parameters (PostgreSQL caches the plans of named
 * prepared statements per connection), checking what the service checks (a first name or an e-mail
 * address, a valid e-mail, one live contact per address) and answering the same bodies as the REST
 * adapter. What the platform's chain is measured against.
 *
 *   node dist/bench/floor.js    (BENCH_PLATFORM_DATABASE_URL; run by the benches as a child process)
 */
import express from 'express';
import pg from 'pg';

interface ContactRow {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  tags: string[];
  deleted: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'c0.id, c0.first_name, c0.last_name, c0.email, c0.phone, c0.company, c0.tags, c0.deleted, c0.created_at, c0.updated_at';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const FIELDS = { firstName: 'first_name', lastName: 'last_name', email: 'email', phone: 'phone', company: 'company' };
const RETURNING = COLUMNS.replaceAll('c0.', '');

type ContactFields = Partial<Record<keyof typeof FIELDS, string | null>> & { tags?: string[] | null };

/** The body's fields, trimmed (blank is null), or why it is refused. */
function readFields(body: unknown): ContactFields | string {
  if (typeof body !== 'object' || body === null) return 'body must be a JSON object';
  const fields: ContactFields = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'tags') {
      if (value !== null && !(Array.isArray(value) && value.every((tag) => typeof tag === 'string')))
        return 'tags must be a list of text';
      fields.tags = value === null ? [] : [...new Set((value as string[]).map((tag) => tag.trim()).filter(Boolean))];
    } else if (key in FIELDS) {
      if (value !== null && typeof value !== 'string') return `${key} must be text`;
      fields[key as keyof typeof FIELDS] = typeof value === 'string' ? value.trim() || null : null;
    } else return `${key} is not a contact field`;
  }
  if (fields.email && !EMAIL.test(fields.email)) return 'email must be a valid e-mail address';
  return fields;
}

function problem(res: express.Response, status: number, detail: string) {
  const title = status === 404 ? 'Not Found' : status === 409 ? 'Conflict' : 'Bad Request';
  res.status(status).type('application/problem+json').json({ type: 'about:blank', title, status, detail });
}

const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';

/** A row as the REST adapter answers a contact. */
function toBody(row: ContactRow) {
  return {
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phone: row.phone,
    company: row.company,
    tags: row.tags,
    deleted: row.deleted,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function serveFloor(databaseUrl: string | undefined): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const app = express();
  app.disable('x-powered-by');
  app.get('/api/contacts', async (req, res) => {
    const search = typeof req.query.search === 'string' ? req.query.search : '';
    const words = search
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
    const query = words.map((word) => `${word}:*`).join(' & ');
    const limit = 20;
    const page = 1;
    const [rows, count] = await Promise.all([
      pool.query<ContactRow>({
        name: 'floor-search-page',
        text: `select ${COLUMNS} from contacts.contact as c0
               where c0.deleted = false and c0.search_vector @@ contacts.contact_search_query($1, $2)
               order by c0.created_at desc, c0.id desc limit $3 offset $4`,
        values: [query, search, limit, (page - 1) * limit],
      }),
      pool.query<{ count: string }>({
        name: 'floor-search-count',
        text: `select count(*) as count from contacts.contact as c0 where c0.deleted = false and c0.search_vector @@ contacts.contact_search_query($1, $2)`,
        values: [query, search],
      }),
    ]);
    res.json({ data: rows.rows.map(toBody), page, limit, total: Number(count.rows[0].count) });
  });
  app.use(express.json({ limit: '1mb' }));
  app.post('/api/contacts', async (req, res) => {
    const fields = readFields(req.body);
    if (typeof fields === 'string') return problem(res, 400, fields);
    if (!fields.firstName && !fields.email) return problem(res, 400, 'firstName or email is required');
    try {
      const { rows } = await pool.query<ContactRow>({
        name: 'floor-create',
        text: `insert into contacts.contact (id, first_name, last_name, email, phone, company, tags, created_at, updated_at)
               values (gen_random_uuid(), $1, $2, $3, $4, $5, $6, now(), now()) returning ${RETURNING}`,
        values: [fields.firstName, fields.lastName, fields.email, fields.phone, fields.company, fields.tags ?? []],
      });
      res.status(201).location(`/api/contacts/${rows[0].id}`).json(toBody(rows[0]));
    } catch (error) {
      if (isUniqueViolation(error)) return problem(res, 409, 'Another contact already has this e-mail address');
      throw error;
    }
  });
  app.put('/api/contacts/:id', async (req, res) => {
    const fields = readFields(req.body);
    if (typeof fields === 'string') return problem(res, 400, fields);
    const id = req.params.id;
    if (!UUID.test(id)) return problem(res, 404, 'Contact not found');
    // Omitted fields stay as they are: each column is set only when the body names it. (Unlike the service,
    // the floor does not refuse an update that clears both the first name and the e-mail; the bench sends none.)
    const given = (field: keyof ContactFields) => fields[field] !== undefined;
    try {
      const { rows } = await pool.query<ContactRow>({
        name: 'floor-update',
        text: `update contacts.contact set
                 first_name = case when $2 then $3 else first_name end,
                 last_name = case when $4 then $5 else last_name end,
                 email = case when $6 then $7 else email end,
                 phone = case when $8 then $9 else phone end,
                 company = case when $10 then $11 else company end,
                 tags = case when $12 then $13 else tags end,
                 updated_at = now()
               where id = $1 and not deleted
               returning ${RETURNING}`,
        values: [
          id,
          given('firstName'),
          fields.firstName,
          given('lastName'),
          fields.lastName,
          given('email'),
          fields.email,
          given('phone'),
          fields.phone,
          given('company'),
          fields.company,
          given('tags'),
          fields.tags ?? [],
        ],
      });
      if (!rows[0]) return problem(res, 404, 'Contact not found');
      res.json(toBody(rows[0]));
    } catch (error) {
      if (isUniqueViolation(error)) return problem(res, 409, 'Another contact already has this e-mail address');
      throw error;
    }
  });
  app.get('/api/contacts/:id', async (req, res) => {
    const id = req.params.id;
    const { rows } = UUID.test(id)
      ? await pool.query<ContactRow>({
          name: 'floor-by-id',
          text: `select ${COLUMNS} from contacts.contact as c0 where c0.id = $1 and c0.deleted = false`,
          values: [id],
        })
      : { rows: [] };
    if (!rows[0]) {
      res
        .status(404)
        .type('application/problem+json')
        .json({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'Contact not found' });
      return;
    }
    res.json(toBody(rows[0]));
  });
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: async () => {
          await new Promise((done) => server.close(done));
          await pool.end();
        },
      });
    });
  });
}
