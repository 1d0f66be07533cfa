// The project this credential belongs to, and enrolling one explicitly.
import type { Project, ProjectCapabilities } from '../../contract/tenants';
import { command } from '../command';
import { ensureEnrolled } from '../enrollment';
import { fields, formatBytes, type Block } from '../output';

function projectFields(project: Project): Block {
  return fields(
    ['id', project.id],
    ['name', project.name],
    ['revision', project.revision],
    ['plan', project.plan],
    ['contact email', project.contact_email],
    ['screens', `${project.screen_count} of ${project.screen_limit}`],
    [
      'storage',
      `${formatBytes(project.used_bytes)} used, ${formatBytes(project.reserved_bytes)} reserved, of ${formatBytes(project.content_limit_bytes)}`,
    ],
    ['credits', project.credit_remaining],
  );
}

export const projectCommands = [
  command({
    name: 'enroll',
    summary: 'enroll a project on this server and store its credential (done on first use anyway)',
    description:
      'Without a stored credential, every command that needs one enrolls first (with --email, or asking on a terminal).\nThe token is written only to the config file (owner-only); it is never printed.',
    options: [
      { flags: '--project-name <name>', description: 'name of the new project' },
      { flags: '--beta-key <key>', description: 'the key of a server that gates enrollment' },
    ],
    async run(ctx) {
      const { entry, enrolledNow } = await ensureEnrolled({
        config: ctx.config,
        apiUrl: ctx.apiUrl,
        email: ctx.options.email as string | undefined,
        projectName: ctx.options.projectName as string | undefined,
        betaKey: ctx.options.betaKey as string | undefined,
        prompt: ctx.prompt,
        client: ctx.publicClient(),
        signal: ctx.signal,
        note: ctx.note,
      });
      // A stored credential is checked, not just reported: the server must still accept it.
      if (!enrolledNow) await (await ctx.client()).project.get();
      return {
        api_url: ctx.apiUrl,
        project_id: entry.project_id ?? null,
        project_name: entry.project_name ?? null,
        enrolled_now: enrolledNow,
        config_path: ctx.config.path,
      };
    },
    human: (data) => [
      fields(
        ['server', data.api_url],
        ['project', data.project_id],
        ['name', data.project_name],
        [
          'credential',
          data.enrolled_now ? `new, stored in ${data.config_path}` : `already stored in ${data.config_path}`,
        ],
      ),
    ],
    ids: (data) => (data.project_id ? [data.project_id] : []),
  }),
  command({
    name: 'project show',
    summary: 'show the project: name, plan, quota and credits',
    async run(ctx) {
      return (await (await ctx.client()).project.get()).data;
    },
    human: (project: Project) => [projectFields(project)],
    ids: (project: Project) => [project.id],
  }),
  command({
    name: 'project rename',
    summary: 'rename the project',
    arguments: ['<name>'],
    ifMatch: true,
    idempotencyKeyOption: true,
    async run(ctx) {
      const client = await ctx.client();
      return (await client.project.update({ name: ctx.args[0] as string }, ctx.guarded())).data;
    },
    human: (project: Project) => [projectFields(project)],
    ids: (project: Project) => [project.id],
  }),
  command({
    name: 'project capabilities',
    summary: 'show the plan and the capability areas this credential may use',
    async run(ctx) {
      return (await (await ctx.client()).project.capabilities()).data;
    },
    human: (caps: ProjectCapabilities) => [
      fields(
        ['plan', caps.plan],
        ['revision', caps.revision],
        ['screens', caps.screens],
        ['independent advertiser', caps.independent_advertiser],
        ['areas', caps.effective.join(', ')],
      ),
    ],
  }),
];
