import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '#test/support/ports.js';
import { linkIn, MailCatcher } from '#test/surveys/support.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

const DOMAIN = 'field.example';
const ADMIN = 'boss@hq.example';
const LINK_BASE = 'https://app.example/auth/magic';

type GraphQLError = { message: string; path?: Array<string | number>; extensions?: Record<string, unknown> };

/** Each error's field path and code, the part of a refusal a frontend acts on. */
const refusals = (errors: GraphQLError[] | undefined) =>
  (errors ?? []).map((error) => ({ path: error.path, code: error.extensions?.code }));

/**
 * One sign-in across the three services, through the gateway: an identity token with an `email`
 * claim is a surveyor (the same one as a magic-link session of that address), a survey session is
 * read by surveys and by contacts where contacts are open, and social refuses it for its own fields.
 * Surveys runs in the gateway's process (as under `npm start`) and apart, over HTTP.
 */
describe.each([
  ['in process, contacts open', false, 'open'],
  ['over HTTP (SURVEYS_SUBGRAPH_URL), contacts required', true, 'required'],
])('one sign-in: surveys %s', (_how, overHttp, contactsAuth) => {
  let platform: TestPlatform;
  let gateway: string;
  const mail = new MailCatcher();
  let aliceSession: string;
  let aliceSurveyId: string;
  let contactId: string;

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const token = (email?: string, scopes?: string[]) => platform.token(`sub-${email ?? 'none'}`, scopes, email);
  const ask = (query: string, headers: Record<string, string>, variables: Record<string, unknown> = {}) =>
    graphql<any>(gateway, query, variables, headers).then((answer) => answer.body);

  const SURVEYS = '{ surveys(first: 50) { totalCount nodes { id ownerEmail } } }';
  const CREATE = 'mutation ($input: CreateSurveyInput!) { createSurvey(input: $input) { id ownerEmail } }';
  const ids = (answer: any) => (answer.data.surveys.nodes as Array<{ id: string }>).map((node) => node.id).sort();

  beforeAll(async () => {
    await mail.start();
    const port = await freePort();
    platform = await startTestPlatform({
      SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
      ALLOWED_EMAIL_DOMAINS: DOMAIN,
      ADMIN_EMAILS: ADMIN,
      MAGIC_LINK_BASE_URL: LINK_BASE,
      CONTACTS_AUTH: contactsAuth,
      ...(overHttp
        ? { SURVEYS_SUBGRAPH_PORT: String(port), SURVEYS_SUBGRAPH_URL: `http://127.0.0.1:${port}/graphql` }
        : {}),
    });
    gateway = platform.urls.gateway;

    // Alice signs in by the mailed link, through the gateway, and writes a survey about a contact.
    const requested = await ask(
      'mutation ($email: String!) { requestMagicLink(input: { email: $email }) { accepted } }',
      {},
      {
        email: `alice@${DOMAIN}`,
      },
    );
    expect(requested.data).toEqual({ requestMagicLink: { accepted: true } });
    const link = linkIn(await mail.waitFor(`alice@${DOMAIN}`), `${LINK_BASE}?`)!;
    const verified = await ask(
      'mutation ($token: String!) { verifyMagicLink(input: { token: $token }) { token } }',
      {},
      { token: link.searchParams.get('token') },
    );
    aliceSession = verified.data.verifyMagicLink.token;
    const contact = await ask(
      'mutation { createContact(input: { firstName: "Vera", lastName: "Venue" }) { id } }',
      bearer(await token()),
    );
    contactId = contact.data.createContact.id;
    const created = await ask(CREATE, bearer(aliceSession), { input: { venueName: 'By the link', contactId } });
    aliceSurveyId = created.data.createSurvey.id;
  });

  afterAll(async () => {
    await platform?.stop();
    await mail.stop();
  });

  it('takes an identity token with an email as the surveyor of that address: same surveys, same ownership', async () => {
    // The claim's case does not matter: addresses are compared as the magic link stores them.
    const alice = bearer(await token(`Alice@${DOMAIN.toUpperCase()}`));
    const created = await ask(CREATE, alice, { input: { venueName: 'By the token', contactId } });
    expect(created.errors).toBeUndefined();
    expect(created.data.createSurvey.ownerEmail).toBe(`alice@${DOMAIN}`);

    const byToken = await ask(SURVEYS, alice);
    const bySession = await ask(SURVEYS, bearer(aliceSession));
    expect(byToken.errors).toBeUndefined();
    expect(ids(byToken)).toEqual([aliceSurveyId, created.data.createSurvey.id].sort());
    expect(ids(bySession)).toEqual(ids(byToken));

    // What the session made, the token may change, and the other way round.
    const renamed = await ask(
      'mutation ($id: ID!) { updateSurvey(id: $id, input: { notes: "checked by token" }) { notes } }',
      alice,
      { id: aliceSurveyId },
    );
    expect(renamed.data).toEqual({ updateSurvey: { notes: 'checked by token' } });
    const session = await ask('{ surveySession { user { email isAdmin } expiresAt } }', alice);
    expect(session.data.surveySession.user).toEqual({ email: `alice@${DOMAIN}`, isAdmin: false });
    expect(new Date(session.data.surveySession.expiresAt).getTime()).toBeGreaterThan(Date.now());

    // Across services: the contact's surveys, by the token alone.
    const contact = await ask('query ($id: ID!) { contact(id: $id) { id surveys { id } } }', alice, {
      id: contactId,
    });
    expect(contact.errors).toBeUndefined();
    expect(contact.data.contact.surveys.map((survey: { id: string }) => survey.id).sort()).toEqual(ids(byToken));

    // The REST routes run the same operations, so they take the token too, with their documented statuses.
    const listed = await rest('GET', `${platform.urls.surveysRest}/api/surveys`, undefined, alice);
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(2);
    const made = await rest('POST', `${platform.urls.surveysRest}/api/surveys`, { venueName: 'By REST' }, alice);
    expect(made.status).toBe(201);
    expect(made.body.ownerEmail).toBe(`alice@${DOMAIN}`);
  });

  it('exports a survey in a format named by the SurveyExportFormat enum, or by the deprecated text', async () => {
    const EXPORT = `query ($id: ID!, $exportFormat: SurveyExportFormat, $format: String) {
      surveyExportFormats
      surveyExport(id: $id, exportFormat: $exportFormat, format: $format) { format contentType }
    }`;
    const session = bearer(aliceSession);
    const markdown = await ask(EXPORT, session, { id: aliceSurveyId, exportFormat: 'MARKDOWN' });
    expect(markdown.data).toEqual({
      surveyExportFormats: ['HTML', 'MARKDOWN', 'WHATSAPP'],
      surveyExport: { format: 'MARKDOWN', contentType: expect.stringContaining('text/markdown') },
    });
    const byText = await ask(EXPORT, session, { id: aliceSurveyId, format: 'whatsapp' });
    expect(byText.data.surveyExport.format).toBe('WHATSAPP');
    const unknown = await ask(EXPORT, session, { id: aliceSurveyId, exportFormat: 'PDF' });
    expect(refusals(unknown.errors)).toEqual([{ path: undefined, code: 'BAD_USER_INPUT' }]);
  });

  it('takes a token without an email as no surveyor: UNAUTHENTICATED on survey fields, 401 on REST', async () => {
    const nobody = bearer(await token());
    expect(refusals((await ask(SURVEYS, nobody)).errors)).toEqual([{ path: ['surveys'], code: 'UNAUTHENTICATED' }]);
    expect(refusals((await ask(CREATE, nobody, { input: { venueName: 'No' } })).errors)).toEqual([
      { path: ['createSurvey'], code: 'UNAUTHENTICATED' },
    ]);
    const contact = await ask('query ($id: ID!) { contact(id: $id) { id surveys { id } } }', nobody, {
      id: contactId,
    });
    expect(refusals(contact.errors)).toEqual([{ path: ['contact', 'surveys'], code: 'UNAUTHENTICATED' }]);
    // The refusal costs that field only: the contact stands.
    expect(contact.data).toEqual({ contact: { id: contactId, surveys: null } });
    expect((await rest('GET', `${platform.urls.surveysRest}/api/surveys`, undefined, nobody)).status).toBe(401);
  });

  it('limits a token with a scope claim to surveys.read and surveys.write', async () => {
    const email = `alice@${DOMAIN}`;
    const socialOnly = bearer(await token(email, ['posts.read']));
    expect(refusals((await ask(SURVEYS, socialOnly)).errors)).toEqual([{ path: ['surveys'], code: 'FORBIDDEN' }]);
    expect((await rest('GET', `${platform.urls.surveysRest}/api/surveys`, undefined, socialOnly)).status).toBe(403);

    const reader = bearer(await token(email, ['surveys.read']));
    expect(ids(await ask(SURVEYS, reader))).toContain(aliceSurveyId);
    expect(refusals((await ask(CREATE, reader, { input: { venueName: 'No' } })).errors)).toEqual([
      { path: ['createSurvey'], code: 'FORBIDDEN' },
    ]);
    const surveysBefore = (await ask(SURVEYS, reader)).data.surveys.totalCount;

    const writer = bearer(await token(email, ['surveys.read', 'surveys.write']));
    expect((await ask(CREATE, writer, { input: { venueName: 'Scoped' } })).data.createSurvey.ownerEmail).toBe(email);
    expect((await ask(SURVEYS, reader)).data.surveys.totalCount).toBe(surveysBefore + 1);
  });

  it('applies ALLOWED_EMAIL_DOMAINS and ADMIN_EMAILS to the token as to a magic link', async () => {
    const outsider = bearer(await token('eve@elsewhere.example'));
    expect(refusals((await ask(SURVEYS, outsider)).errors)).toEqual([{ path: ['surveys'], code: 'FORBIDDEN' }]);
    expect(refusals((await ask(CREATE, outsider, { input: { venueName: 'No' } })).errors)).toEqual([
      { path: ['createSurvey'], code: 'FORBIDDEN' },
    ]);
    expect((await rest('GET', `${platform.urls.surveysRest}/api/surveys`, undefined, outsider)).status).toBe(403);

    // The admin's address is outside the allowed domain, and sees every survey.
    const admin = bearer(await token(ADMIN));
    const all = await ask(SURVEYS, admin);
    expect(all.errors).toBeUndefined();
    expect(ids(all)).toContain(aliceSurveyId);
    const alices = await ask(SURVEYS, bearer(aliceSession));
    expect(all.data.surveys.totalCount).toBe(alices.data.surveys.totalCount);
    const session = await ask('{ surveySession { user { email isAdmin } } }', admin);
    expect(session.data.surveySession.user).toEqual({ email: ADMIN, isAdmin: true });
    // Admins review, only the owner changes.
    const update = await ask('mutation ($id: ID!) { updateSurvey(id: $id, input: { notes: "admin" }) { id } }', admin, {
      id: aliceSurveyId,
    });
    expect(refusals(update.errors)).toEqual([{ path: ['updateSurvey'], code: 'FORBIDDEN' }]);
  });

  it('takes a survey session as bearer in surveys, in contacts only where they are open, and social refuses its own fields', async () => {
    const session = bearer(aliceSession);
    expect(ids(await ask(SURVEYS, session))).toContain(aliceSurveyId);

    const contacts = await ask('{ contacts(first: 1) { totalCount } }', session);
    if (contactsAuth === 'open') {
      expect(contacts.errors).toBeUndefined();
      expect(contacts.data.contacts.totalCount).toBeGreaterThanOrEqual(1);
      const across = await ask('query ($id: ID!) { contact(id: $id) { id surveys { id } } }', session, {
        id: contactId,
      });
      expect(across.errors).toBeUndefined();
      expect(across.data.contact.surveys.map((survey: { id: string }) => survey.id)).toContain(aliceSurveyId);
    } else {
      expect(refusals(contacts.errors)).toEqual([{ path: ['contacts'], code: 'UNAUTHENTICATED' }]);
      expect(contacts.data).toEqual({ contacts: null });
    }

    // Social answers UNAUTHENTICATED for its field, and only for it: surveys still ran and answered.
    const mixed = await ask('{ surveys(first: 1) { totalCount } posts(first: 1) { totalCount } }', session);
    expect(refusals(mixed.errors)).toEqual([{ path: ['posts'], code: 'UNAUTHENTICATED' }]);
    expect(mixed.data.posts).toBeNull();
    expect(mixed.data.surveys.totalCount).toBeGreaterThanOrEqual(1);
    expect((await rest('GET', `${platform.urls.socialRest}/api/posts`, undefined, session)).status).toBe(401);
  });
});
