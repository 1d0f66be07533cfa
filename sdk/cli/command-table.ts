// Every command the CLI has, in help order. A command the server gains later (schedule, takeover,
// toast, display, reboot, screen actions, screenshot, comments, connecting an agent
// installation) is one entry in its feature's file; nothing else changes.
import type { CommandSpec } from './command';
import { accountCommands } from './commands/account.commands';
import { agentCommands } from './commands/agents.commands';
import { applicationCommands } from './commands/applications.commands';
import { billingCommands } from './commands/billing.commands';
import { commentCommands } from './commands/comments.commands';
import { doctorCommand } from './commands/doctor.command';
import { eventCommands } from './commands/events.commands';
import { feedbackCommands } from './commands/feedback.commands';
import { invitationCommands } from './commands/invitations.commands';
import { kvCommands } from './commands/kv.commands';
import { mediaCommands } from './commands/media.commands';
import { operationCommands } from './commands/operations.commands';
import { playbackCommands } from './commands/playback.commands';
import { playlistCommands } from './commands/playlists.commands';
import { projectCommands } from './commands/project.commands';
import { screenCommands } from './commands/screens.commands';
import { fleetCommands } from './commands/fleet.commands';

export const COMMANDS = [
  doctorCommand,
  ...projectCommands,
  ...accountCommands,
  ...screenCommands,
  ...fleetCommands,
  ...playlistCommands,
  ...commentCommands,
  ...mediaCommands,
  ...applicationCommands,
  ...kvCommands,
  ...eventCommands,
  ...playbackCommands,
  ...operationCommands,
  ...invitationCommands,
  ...agentCommands,
  ...billingCommands,
  ...feedbackCommands,
] as CommandSpec<unknown>[];
