// The agent installation this CLI's credential is: show it, or disconnect it. Disconnecting revokes
// the stored token on the server; the project's last active installation is refused unless
// --allow-last-agent (nothing could reach the project's API any more).
import type { AgentSelfStatus } from '../../contract/agents';
import { command } from '../command';
import { fields, lines } from '../output';

export const agentCommands = [
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
