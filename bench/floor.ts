/**
 * The floor of the benchmarks: `GET /api/contacts/{id}` and the search of `GET /api/contacts`
 * written by hand with Express 5 and `pg`, reading the project's own `contacts.contact` table with
 * bind parameters (PostgreSQL caches the plans of named prepared statements per connection) and
 * answering the same bodies as the REST adapter. What the platform's chain is measured against.
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
    const words = (typeof req.query.search === 'string' ? req.query.search : '')
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
               where c0.deleted = false and c0.search_vector @@ to_tsquery('simple', $1)
               order by c0.created_at desc, c0.id desc limit $2 offset $3`,
        values: [query, limit, (page - 1) * limit],
      }),
      pool.query<{ count: string }>({
        name: 'floor-search-count',
        text: `select count(*) as count from contacts.contact as c0 where c0.deleted = false and c0.search_vector @@ to_tsquery('simple', $1)`,
        values: [query],
      }),
    ]);
    res.json({ data: rows.rows.map(toBody), page, limit, total: Number(count.rows[0].count) });
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
