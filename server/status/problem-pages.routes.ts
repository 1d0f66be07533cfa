// Each problem type URI resolves to a short human page: the code, its status and what it means.
import { PROBLEM_CODES, statusOf, type ProblemCode } from '../problem';
import { problem } from '../problem';
import { query } from '../http/route';

export const problemPage = query({}, async (ctx) => {
  const code = ctx.params.slug!.replace(/-/g, '_');
  if (!Object.hasOwn(PROBLEM_CODES, code)) throw problem('not_found', 'no such problem type');
  const c = code as ProblemCode;
  const html = `<!doctype html><meta charset="utf-8"><title>${c}</title>
<h1><code>${c}</code></h1><p>${PROBLEM_CODES[c].title}.</p>
<p>HTTP status ${statusOf(c, 'P')}${statusOf(c, 'A') !== statusOf(c, 'P') ? ` (${statusOf(c, 'A')} for Model A)` : ''}.</p>`;
  ctx.res.status(200).setHeader('Content-Type', 'text/html; charset=utf-8');
  ctx.res.setHeader('Cache-Control', 'public, max-age=86400');
  ctx.res.end(html);
});
