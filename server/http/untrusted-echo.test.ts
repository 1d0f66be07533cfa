// Untrusted text never reaches a terminal or a log raw: every character class that can drive a
// terminal or reorder text, through every way a request's text is echoed in a problem or a log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPLOAD_HEADERS } from '../../sdk/contract/applications';
import { archiveOf, uploadHeadersOf } from '../applications/archive-fixtures';
import { problem } from '../problem';
import { query } from './route';
import { TestServer, randomKey } from '../testing/harness';

/** Each class the rule covers, with one character of it and the escape a reader sees instead. */
const CLASSES = [
  { name: 'C0 (ESC)', character: '\u001b', escaped: '\\u001b' },
  { name: 'DEL', character: '\u007f', escaped: '\\u007f' },
  { name: 'C1 NEL', character: '\u0085', escaped: '\\u0085' },
  { name: 'C1 CSI', character: '\u009b', escaped: '\\u009b' },
  { name: 'bidi override (RLO)', character: '\u202e', escaped: '\\u202e' },
  { name: 'bidi isolate (LRI)', character: '\u2066', escaped: '\\u2066' },
] as const;

/** Every character the rule escapes, for "nothing raw is left" checks. */
const RAW = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await TestServer.start({
    extraRoutes: [
      {
        // A detail that repeats request text without echo(): rendering escapes it anyway.
        plane: 'control',
        method: 'GET',
        path: '/test/refuses/:name',
        route: query({}, async (ctx) => {
          throw problem('invalid_request', `cannot use ${ctx.params.name}`, {
            errors: [{ field: ctx.params.name!, code: 'invalid', detail: `${ctx.params.name} is not allowed` }],
          });
        }),
      },
      {
        plane: 'control',
        method: 'GET',
        path: '/test/fails/:name',
        route: query({}, async (ctx) => {
          throw new Error(`could not open ${ctx.params.name}`);
        }),
      },
    ],
  });
  ({ token } = await server.enroll());
});
afterAll(async () => server.stop());

/** The texts of a problem a client or terminal would print. */
function printed(problem: { detail: string; instance: string; errors: { field: string; detail: string }[] }): string[] {
  return [problem.detail, problem.instance, ...problem.errors.flatMap((e) => [e.field, e.detail])];
}

function expectEscaped(problem: any, escaped: string): void {
  for (const text of printed(problem)) expect(text).not.toMatch(RAW);
  expect(printed(problem).join('\n')).toContain(escaped);
}

async function failedUpload(name: string): Promise<any> {
  // The same path twice: a refusal that repeats the path whatever characters it has.
  const entries = [
    { name: `a${name}b.txt`, data: 'one' },
    { name: `a${name}b.txt`, data: 'two' },
  ];
  const fixture = archiveOf(entries);
  const accepted = await server.request('POST', '/api/v1/applications', {
    token,
    idempotencyKey: randomKey(),
    body: fixture.body,
    headers: uploadHeadersOf(fixture.declaration),
  });
  expect(accepted.status).toBe(202);
  await server.services.operations.idle();
  const operation = (
    await server.request('GET', `/api/v1/operations/${accepted.json().operation_id}`, { token })
  ).json();
  expect(operation.state).toBe('failed');
  return operation.error;
}

describe.each(CLASSES)('$name', ({ character, escaped }) => {
  // A project per class: uploads have a per-project rate budget.
  beforeAll(async () => {
    ({ token } = await server.enroll());
  });

  it('is escaped where an archive path is repeated in the refusal', async () => {
    const error = await failedUpload(character);
    expectEscaped(error, `a${escaped}b.txt`);
  });

  it('is escaped where the Marquee-Application-Name* header is refused', async () => {
    const fixture = archiveOf([{ name: 'index.html', data: '<p>hi</p>' }]);
    const encoded = `UTF-8''Lobby${encodeURIComponent(character)}`;
    const res = await server.request('POST', '/api/v1/applications', {
      token,
      idempotencyKey: randomKey(),
      body: fixture.body,
      headers: uploadHeadersOf(fixture.declaration, { [UPLOAD_HEADERS.applicationNameExtended]: encoded }),
    });
    const problem = res.json();
    // Names may hold bidirectional marks (right-to-left scripts need them); controls are refused.
    if (/\p{Cc}/u.test(character)) {
      expect(res.status).toBe(400);
      expectEscaped(problem, escaped);
    } else {
      expect(res.status).toBe(202);
    }
  });

  it('is escaped where an unknown query parameter is named', async () => {
    const res = await server.request('GET', `/api/v1/screens?x${encodeURIComponent(character)}y=1`, { token });
    expect(res.status).toBe(400);
    expectEscaped(res.json(), `x${escaped}y`);
  });

  it('is escaped where an unknown JSON field is named', async () => {
    const res = await server.request('PATCH', '/api/v1/project', { token, json: { [`k${character}`]: 1 } });
    expect(res.status).toBe(400);
    expectEscaped(res.json(), `k${escaped}`);
  });

  it('is escaped where malformed JSON is quoted back', async () => {
    const res = await server.request('PATCH', '/api/v1/project', {
      token,
      body: `{"name": ${character}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    for (const text of printed(res.json())) expect(text).not.toMatch(RAW);
  });

  it('is escaped in any problem text, even one written without echo()', async () => {
    const res = await server.request('GET', `/test/refuses/x${encodeURIComponent(character)}y`);
    expect(res.status).toBe(400);
    expectEscaped(res.json(), `x${escaped}y`);
  });

  it('is escaped in the log line of a request that carried it', async () => {
    const before = server.logs.length;
    const res = await server.request('GET', `/test/fails/x${encodeURIComponent(character)}y`);
    expect(res.status).toBe(500);
    const lines = server.logs.slice(before).join('');
    expect(lines.replace(/\n/g, '')).not.toMatch(RAW);
    const logged = lines
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === 'unexpected error');
    // The JSON line parses back to the message as thrown: the escape is only in the bytes written.
    expect(logged.err.message).toBe(`could not open x${character}y`);
    expect(lines).toContain(escaped);
  });
});

describe('long echoes', () => {
  it('cut an unknown field name with an ellipsis instead of repeating it whole', async () => {
    const res = await server.request('PATCH', '/api/v1/project', {
      token,
      json: { name: 'Lobby', ['k'.repeat(5000)]: 1 },
    });
    const problem = res.json();
    expect(problem.detail.length).toBeLessThan(300);
    expect(problem.detail).toContain('…');
    expect(problem.errors[0].field.length).toBeLessThan(200);
  });
});
