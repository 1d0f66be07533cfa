// Members of the project and its invitations: invite by email, revoke an outstanding invitation.
import { type FormEvent, useState } from 'react';
import type { Invitation } from '../../../sdk/contract/people';
import { timeAgo } from '../app/format';
import { useDashboard } from '../app/dashboard-context';
import { Notice, PageHeading } from '../app/PageHeading';
import { useLoaded } from '../app/use-loaded';
import { useNow } from '../app/use-now';
import { problemMessage } from '../state/problem-message';

export function MembersPage() {
  const { client } = useDashboard();
  const now = useNow();
  const members = useLoaded(() => client.session.members(), [client], 'The members');
  const invitations = useLoaded(
    async () => (await client.invitations.list()).data.items as Invitation[],
    [client],
    'The invitations',
  );
  const [email, setEmail] = useState('');
  const [result, setResult] = useState<{ text: string; error: boolean } | null>(null);

  const invite = async (e: FormEvent) => {
    e.preventDefault();
    // As the CLI does: a member's address is not invited again (the mail could only confuse them,
    // and accepting it would be refused: they are in the project already).
    const member = members.value?.find((m) => m.email.toLowerCase() === email.trim().toLowerCase());
    if (member) {
      setResult({
        text: `${member.display_name} (${member.email}) is a member already: not invited again.`,
        error: true,
      });
      return;
    }
    try {
      await client.invitations.create({ kind: 'project_member', emails: [email.trim()] });
      setResult({ text: `Invitation mailed to ${email.trim()}.`, error: false });
      setEmail('');
      invitations.reload();
    } catch (error) {
      setResult({ text: problemMessage(error, 'The invitation was not sent'), error: true });
    }
  };
  const revoke = async (invitation: Invitation) => {
    try {
      await client.invitations.revoke(invitation.id);
      setResult({ text: `Revoked the invitation of ${invitation.email ?? 'the link'}.`, error: false });
      invitations.reload();
    } catch (error) {
      setResult({ text: problemMessage(error, 'The invitation was not revoked'), error: true });
    }
  };

  const outstanding = invitations.value?.filter((i) => i.status === 'outstanding') ?? [];
  return (
    <section className="page">
      <PageHeading>Members</PageHeading>
      <Notice text={members.error} error />
      <table className="table">
        <caption className="visually-hidden">Members</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Signs in with</th>
            <th scope="col">Joined</th>
          </tr>
        </thead>
        <tbody>
          {members.value?.map((m) => (
            <tr key={m.person_id}>
              <th scope="row">{m.display_name}</th>
              <td data-label="Email">{m.email}</td>
              <td data-label="Signs in with">
                {[m.password ? 'password' : '', m.passkeys ? `${m.passkeys} passkey(s)` : '']
                  .filter(Boolean)
                  .join(', ')}
              </td>
              <td data-label="Joined">{timeAgo(m.joined_at, now)}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <form className="panel invite" onSubmit={(e) => void invite(e)} aria-labelledby="invite-heading">
        <h2 id="invite-heading">Invite someone</h2>
        <div className="row">
          <label>
            Their email address
            <input type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <button type="submit">Send invitation</button>
        </div>
        <Notice text={result?.text ?? null} error={result?.error} />
      </form>

      <h2>Open invitations</h2>
      <Notice text={invitations.error} error />
      {outstanding.length === 0 ? (
        <p className="hint">None.</p>
      ) : (
        <ul className="plain-list">
          {outstanding.map((i) => (
            <li key={i.id}>
              {i.email ?? 'A link invitation'}, open until {i.expires_at.slice(0, 10)}{' '}
              <button type="button" className="quiet" onClick={() => void revoke(i)}>
                Revoke<span className="visually-hidden"> the invitation of {i.email ?? 'the link'}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
