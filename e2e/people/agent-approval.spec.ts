// Agent approval: an agent (the SDK's envelope client, in Node) asks to connect and shows a code;
// a member opens the approval URL, signs in, types the code and approves; the agent collects the
// sealed credential, opens it with its private key, activates it and uses the project.
import path from 'node:path';
import { connectAgent } from '../../sdk/client/agent-connection';
import type { AgentConnectionStart } from '../../sdk/contract/agents';
import { linkToken } from '../../server/mail/mail.fixtures';
import { AccessPage } from '../pages/access-page';
import { ARTIFACTS } from '../pages/player-page';
import { ControlApi } from '../support/control-api';
import { expect, test } from '../support/fixtures';

test('a member approves an agent installation on the dashboard', async ({ page, marquee, mailbox }) => {
  const owner = new ControlApi(marquee.origin);
  await owner.enroll();
  await owner.request('POST', '/api/v1/invitations', {
    json: { kind: 'project_member', emails: ['amal@example.com'] },
  });
  const mail = await mailbox.waitFor('amal@example.com');
  const access = new AccessPage(page, marquee.dashboardOrigin);
  await access.openLink(`${marquee.dashboardOrigin}/#invite=${linkToken(mail, 'invite')}`);
  await access.signUpWithPassword('Amal', 'a long enough passphrase');
  await access.expectSignedIn('Amal');
  await access.signOut();

  let started!: (start: AgentConnectionStart) => void;
  const startedPromise = new Promise<AgentConnectionStart>((resolve) => (started = resolve));
  const connecting = connectAgent(
    { baseUrl: marquee.origin },
    { name: 'Release robot', agent_type: 'ci', capabilities: ['screens', 'reports'] },
    { onStart: started },
  );
  const start = await startedPromise;
  expect(start.approval_url).toBe(`${marquee.dashboardOrigin}/connect/${start.connection.id}`);

  await access.open(start.approval_url);
  await expect(page.locator('#sign-in-reason')).toHaveText(
    'Sign in to approve or deny the agent that asks to connect.',
  );
  await access.signInWithPassword('amal@example.com', 'a long enough passphrase');
  await expect(page.locator('#connect-details')).toContainText('Release robot');
  await expect(page.locator('#connect-details')).toContainText('screens, reports');
  await page.screenshot({ path: path.join(ARTIFACTS, 'people-agent-approval.png') });
  await access.approveAgent(start.user_code);

  const { credential, agent } = await connecting;
  expect(agent).toMatchObject({ name: 'Release robot', state: 'active', capabilities: ['screens', 'reports'] });
  const project = await new ControlApi(marquee.origin, credential.token).request('GET', '/api/v1/project');
  expect(project.status).toBe(200);
  const playlists = await new ControlApi(marquee.origin, credential.token).request('POST', '/api/v1/playlists', {
    json: { name: 'x', pages: [] },
  });
  expect(playlists.body.missing_capability).toBe('playlists');

  // A mistyped approval address says so in words over the member's page.
  await access.open('/connect/agc_no-such-request');
  await expect(access.status).toHaveText(
    'No agent asks to connect at this address. Check it against the one your agent shows, or ask it to start again.',
  );
  await access.expectSignedIn('Amal');
});

test('a member of two projects chooses which one an agent joins, on the approval page', async ({
  page,
  marquee,
  mailbox,
}) => {
  const access = new AccessPage(page, marquee.dashboardOrigin);
  const projects: ControlApi[] = [];
  for (const name of ['Harbour', 'Station']) {
    const owner = new ControlApi(marquee.origin);
    await owner.enroll();
    expect((await owner.request('PATCH', '/api/v1/project', { json: { name } })).status).toBe(200);
    projects.push(owner);
  }
  await projects[0]!.request('POST', '/api/v1/invitations', {
    json: { kind: 'project_member', emails: ['tove@example.com'] },
  });
  await access.openLink(
    `${marquee.dashboardOrigin}/#invite=${linkToken(await mailbox.waitFor('tove@example.com'), 'invite')}`,
  );
  await access.signUpWithPassword('Tove', 'a long enough passphrase');
  await access.expectSignedIn('Tove');
  const link = await projects[1]!.request('POST', '/api/v1/account/dashboard-links');
  await access.openLink(link.body.url);
  await page.getByRole('button', { name: 'Join the project' }).click();
  await expect(access.status).toContainText('You joined');
  const first = (await projects[0]!.request('GET', '/api/v1/project')).body;

  let started!: (start: AgentConnectionStart) => void;
  const startedPromise = new Promise<AgentConnectionStart>((resolve) => (started = resolve));
  const connecting = connectAgent(
    { baseUrl: marquee.origin },
    { name: 'Night robot', capabilities: ['screens'] },
    { onStart: started },
  );
  const start = await startedPromise;
  await access.open(start.approval_url);
  // The session is in the project joined last; Tove connects the agent to the first one instead.
  await expect(page.locator('#connect-project')).not.toContainText(first.name);
  await page.getByLabel('Connect it to').selectOption(first.id);
  await page.getByRole('button', { name: 'Choose this project' }).click();
  await expect(page.locator('#connect-project')).toHaveText(`Approving connects it to “${first.name}” as Tove.`);
  await access.approveAgent(start.user_code);
  const { credential } = await connecting;
  expect(credential.project_id).toBe(first.id);
});
