// The agent installation this CLI's credential is: show it, or disconnect it. Disconnecting revokes
// the stored token on the server; the project's last active installation is refused unless
// --allow-last-agent (nothing could reach the project's API any more).
import os from 'node:os';
import { CAPABILITY_AREAS, type CapabilityArea } from '../../contract/tenants';
import type { Agent, AgentConnectionStart, AgentConnectionState, AgentSelfStatus } from '../../contract/agents';
import { cancelConnection, connectAgent } from '../../client/agent-connection';
import { command } from '../command';
import { CliFailure, EXIT, usage } from '../exit-codes';
import { fields, lines } from '../output';
import { CLI_VERSION } from '../version';

export const agentCommands = [
  command({
    name: 'agent connect',
    summary: 'connect this CLI to an existing project: a member approves it in the dashboard',
    description:
      'Prints the approval URL and a code for a member of the project; the member opens the URL, signs in and types the code.\nThe sealed credential is then collected, opened with a key that never leaves this process, activated and stored in the\nconfig file (never printed). Use it instead of the enrollment a first command would make.',
    options: [
      {
        flags: '--name <name>',
        description: 'what the member sees this installation as (default: Marquee CLI on <host>)',
      },
      {
        flags: '--areas <areas>',
        description: `capability areas to ask for, comma-separated (${CAPABILITY_AREAS.join(', ')}; default all)`,
        parse: 'list',
      },
    ],
    async run(ctx) {
      const stored = (await ctx.config.read()).servers[ctx.apiUrl];
      if (stored?.token)
        throw new CliFailure(
          EXIT.config,
          'already_connected',
          `${ctx.config.path} already holds a credential for ${ctx.apiUrl}; use --config <file> for another, or \`marquee agent disconnect\``,
        );
      const areas = ctx.options.areas as string[] | undefined;
      const unknown = areas?.find((a) => !(CAPABILITY_AREAS as readonly string[]).includes(a));
      if (unknown !== undefined) throw usage(`--areas: unknown area "${unknown}" (${CAPABILITY_AREAS.join(', ')})`);
      let decision: AgentConnectionState = 'pending';
      let started: AgentConnectionStart | undefined;
      const options = { baseUrl: ctx.apiUrl, fetch: ctx.fetch };
      const connected = connectAgent(
        options,
        {
          name: (ctx.options.name as string | undefined) ?? `Marquee CLI on ${os.hostname()}`.slice(0, 80),
          agent_type: 'cli',
          platform: `${os.platform()}/${os.arch()}`.slice(0, 80),
          version: CLI_VERSION,
          ...(areas ? { capabilities: areas as CapabilityArea[] } : {}),
        },
        {
          signal: ctx.signal,
          onStart: (start) => {
            started = start;
            // Without these the member cannot decide: --quiet does not silence them.
            ctx.instruct(`Ask a member of the project to open ${start.approval_url}`);
            ctx.instruct(`and type the code ${start.user_code}. Waiting for their decision…`);
          },
          onChange: (c) => {
            decision = c.state;
            if (c.state !== 'pending') ctx.note(`connection ${c.state}`);
          },
        },
      );
      const { credential, agent } = await connected.catch(async (error: unknown) => {
        // Stopped while waiting: withdraw the request, so the member is not asked about it any more.
        if (ctx.signal.aborted && started && decision === 'pending')
          await cancelConnection(options, started).catch(() => undefined);
        // The member's refusal, or no decision in time, is an outcome with its own class, not a bug.
        if (decision === 'denied' || decision === 'cancelled')
          throw new CliFailure(EXIT.auth, `connection_${decision}`, `the connection was ${decision}: no credential`);
        if (decision === 'expired')
          throw new CliFailure(EXIT.timeout, 'connection_expired', 'nobody decided in time: run agent connect again');
        throw error;
      });
      await ctx.config.update((c) => {
        c.servers[ctx.apiUrl] = {
          token: credential.token,
          project_id: credential.project_id,
          enrolled_at: new Date().toISOString(),
        };
      });
      return { agent, project_id: credential.project_id, config_path: ctx.config.path } as {
        agent: Agent;
        project_id: string;
        config_path: string;
      };
    },
    human: (data) => [
      lines(`connected as "${data.agent.name}" (${data.agent.id}) to project ${data.project_id}`),
      fields(['areas', data.agent.capabilities.join(', ')], ['credential', `stored in ${data.config_path}`]),
    ],
    ids: (data) => [data.agent.id, data.project_id],
  }),
  command({
    name: 'agent show',
    summary: 'show the agent installation this credential belongs to, and whether a member can sign in',
    async run(ctx): Promise<AgentSelfStatus> {
      return (await (await ctx.client()).agents.self()).data;
    },
    human: ({ agent, connection_ready }) => [
      fields(
        ['id', agent.id],
        ['name', agent.name],
        ['type', agent.agent_type],
        ['state', agent.state],
        ['areas', agent.capabilities.join(', ')],
        ['connected', agent.activated_at],
        ['a member can sign in', connection_ready],
      ),
    ],
    ids: ({ agent }) => [agent.id],
  }),
  command({
    name: 'agent disconnect',
    summary: "disconnect this installation: the server revokes this CLI's credential",
    options: [
      {
        flags: '--allow-last-agent',
        description: "disconnect even the project's last active installation (no agent could use the API after)",
      },
    ],
    idempotencyKeyOption: true,
    async run(ctx) {
      const client = await ctx.client();
      const { agent } = (await client.agents.self()).data;
      await client.agents.disconnect(ctx.options.allowLastAgent === true, ctx.call());
      // The token no longer works: keep no dead credential (the next command enrolls anew).
      await ctx.config.update((c) => {
        delete c.servers[ctx.apiUrl];
      });
      return { agent_id: agent.id, disconnected: true };
    },
    human: (data) => [lines(`disconnected ${data.agent_id}; its credential is removed from the config file`)],
    ids: (data) => [data.agent_id],
  }),
];
