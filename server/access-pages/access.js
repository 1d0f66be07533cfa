// The access page on the dashboard origin: sign-in (password or passkey), invitations, sign-in
// resets and agent approval, over the /dashboard/v1 routes. Plain browser JavaScript, no build; the
// full dashboard replaces it. Tokens arrive in the URL fragment and are removed before any request.

const $ = (id) => document.getElementById(id);
let csrf = '';
/** Set while an invitation waits for its person to sign in: accept it right after. */
let acceptAfterSignIn = false;

function show(view) {
  for (const section of document.querySelectorAll('[data-view]')) section.hidden = section.id !== `view-${view}`;
  $('main').focus();
}

function say(text, error = false) {
  const status = $('status');
  status.textContent = text;
  status.classList.toggle('error', error);
}

class Problem extends Error {
  constructor(status, body) {
    super(body?.detail ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['Marquee-CSRF-Token'] = csrf;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new Problem(res.status, data);
  return data;
}

/** What the browser's WebAuthn refusals mean, in words (its own messages point at the W3C spec). */
const PASSKEY_REFUSALS = {
  NotAllowedError:
    'No passkey was used: the request was cancelled, timed out, or this device has none for Marquee. Try again, or use a password.',
  InvalidStateError: 'This device has a passkey for this login already.',
};

/** Runs a step, showing what went wrong instead of throwing. */
function step(fn) {
  return async (event) => {
    event?.preventDefault();
    try {
      await fn(event);
    } catch (error) {
      if (error instanceof Problem) say(error.message, true);
      else if (error instanceof DOMException && Object.hasOwn(PASSKEY_REFUSALS, error.name))
        say(PASSKEY_REFUSALS[error.name], true);
      else say(`Something went wrong: ${error.message}`, true);
    }
  };
}

const passkeysWork = () =>
  typeof PublicKeyCredential !== 'undefined' &&
  typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function' &&
  typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function';

async function createPasskey(startBody) {
  if (!passkeysWork()) throw new Error('this browser cannot make passkeys here; use a password');
  const start = await api('POST', '/dashboard/v1/webauthn/registrations', startBody);
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(start.creation_options);
  const credential = await navigator.credentials.create({ publicKey });
  return api('POST', '/dashboard/v1/webauthn/registrations/complete', {
    ceremony_id: start.ceremony_id,
    credential: credential.toJSON(),
  });
}

async function signedIn(session, message) {
  csrf = session.csrf_token;
  say(message);
  if (acceptAfterSignIn) {
    acceptAfterSignIn = false;
    try {
      const joined = await api('POST', '/dashboard/v1/invitations/accept');
      say(`You joined “${joined.project?.name}”.`);
    } catch (error) {
      // Signed in all the same: show the person's page, and why the invitation was not accepted.
      await route();
      throw error;
    }
  }
  return route();
}

// ---- Signed in: who, which project, members

async function home(session) {
  $('home-who').textContent =
    `${session.display_name} (${session.email})${session.project ? ` in “${session.project.name}”` : ', in no project yet'}.`;
  const projects = await api('GET', '/dashboard/v1/projects');
  const select = $('project-select');
  select.replaceChildren(
    ...projects.items.map((p) => {
      const option = new Option(p.name, p.id, false, p.selected);
      return option;
    }),
  );
  $('project-form').hidden = projects.items.length < 2;
  const list = $('members');
  list.replaceChildren();
  if (session.project?.membership === 'project_member') {
    const members = await api('GET', '/dashboard/v1/members');
    for (const m of members.items) {
      const item = document.createElement('li');
      item.textContent = `${m.display_name} (${m.email})`;
      list.append(item);
    }
  }
  await listSessions();
  show('home');
}

const HOW = {
  password: 'with a password',
  passkey: 'with a passkey',
  signup: 'on joining a project',
  reset: 'through a sign-in link',
};
const when = (iso) => new Date(iso).toLocaleString();

/** The person's live sessions, this one first; each other one can be signed out from here. */
async function listSessions() {
  const sessions = (await api('GET', '/dashboard/v1/sessions')).items;
  sessions.sort((a, b) => Number(b.current) - Number(a.current));
  const list = $('sessions');
  list.replaceChildren(
    ...sessions.map((s) => {
      const item = document.createElement('li');
      const text = document.createElement('span');
      text.textContent = `${s.current ? 'This browser: signed in' : 'Signed in'} ${HOW[s.method] ?? s.method} on ${when(s.created_at)}, last used ${when(s.last_seen_at)}`;
      item.append(text);
      if (!s.current) {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'quiet';
        button.textContent = 'Sign it out';
        button.addEventListener(
          'click',
          step(async () => {
            await api('POST', `/dashboard/v1/sessions/${encodeURIComponent(s.id)}/revoke`);
            say('That session is signed out.');
            await listSessions();
          }),
        );
        item.append(' ', button);
      }
      return item;
    }),
  );
  $('sign-out-others').hidden = !sessions.some((s) => !s.current);
}

// ---- Agent approval

async function connect(id, session) {
  const connection = await api('GET', `/dashboard/v1/agent-connections/${encodeURIComponent(id)}`);
  const details = $('connect-details');
  details.replaceChildren();
  const rows = [
    ['Name', connection.name],
    ['Kind', connection.agent_type],
    ['Platform', connection.platform ?? '—'],
    ['Version', connection.version ?? '—'],
    ['May use', connection.capabilities.join(', ')],
    ['State', connection.state],
    ['Answer before', new Date(connection.expires_at).toLocaleString()],
  ];
  for (const [term, value] of rows) {
    const dt = document.createElement('dt');
    dt.textContent = term;
    const dd = document.createElement('dd');
    dd.textContent = value;
    details.append(dt, dd);
  }
  // The agent joins the session's project: a person in several chooses it here, not on another page.
  const projects = (await api('GET', '/dashboard/v1/projects')).items;
  $('connect-project').textContent = session.project
    ? `Approving connects it to “${session.project.name}” as ${session.display_name}.`
    : projects.length > 0
      ? 'Choose the project to connect it to before approving.'
      : 'You are in no project yet: only a member of a project can approve an agent into it.';
  const select = $('connect-project-select');
  select.replaceChildren(...projects.map((p) => new Option(p.name, p.id, false, p.selected)));
  const pending = connection.state === 'pending';
  $('connect-project-form').hidden = !pending || projects.length === 0 || (projects.length === 1 && session.project);
  $('connect-form').hidden = !pending || !session.project;
  if (connection.state !== 'pending') say(`This request is ${connection.state}.`);
  show('connect');
}

$('connect-form').addEventListener(
  'submit',
  step(async () => {
    const id = decodeURIComponent(location.pathname.split('/')[2]);
    const result = await api('POST', `/dashboard/v1/agent-connections/${encodeURIComponent(id)}/approve`, {
      user_code: $('connect-code').value,
    });
    $('connect-form').hidden = true;
    say(`Approved: the agent “${result.name}” is now collecting its credential.`);
  }),
);

$('connect-project-form').addEventListener(
  'submit',
  step(async () => {
    await api('PUT', '/dashboard/v1/session/project', { project_id: $('connect-project-select').value });
    await route();
  }),
);

$('connect-deny').addEventListener(
  'click',
  step(async () => {
    const id = decodeURIComponent(location.pathname.split('/')[2]);
    await api('POST', `/dashboard/v1/agent-connections/${encodeURIComponent(id)}/deny`);
    $('connect-form').hidden = true;
    say('Denied. The agent gets nothing.');
  }),
);

// ---- Sign-in

$('password-sign-in').addEventListener(
  'submit',
  step(async () => {
    const session = await api('POST', '/dashboard/v1/sign-in', {
      email: $('sign-in-email').value,
      password: $('sign-in-password').value,
    });
    await signedIn(session, `Signed in as ${session.display_name}.`);
  }),
);

$('passkey-sign-in').addEventListener(
  'click',
  step(async () => {
    if (!passkeysWork()) throw new Error('this browser cannot use passkeys here; use your password');
    const start = await api('POST', '/dashboard/v1/webauthn/assertions');
    const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(start.request_options);
    const credential = await navigator.credentials.get({ publicKey });
    const session = await api('POST', '/dashboard/v1/webauthn/assertions/complete', {
      ceremony_id: start.ceremony_id,
      credential: credential.toJSON(),
    });
    await signedIn(session, `Signed in as ${session.display_name}.`);
  }),
);

$('reset-request').addEventListener(
  'submit',
  step(async () => {
    await api('POST', '/dashboard/v1/sign-in-resets', { email: $('reset-email').value });
    say(
      'If this address has a login or an enrolled project, a mail with a link is on its way. The link works for one hour.',
    );
  }),
);

$('sign-out').addEventListener(
  'click',
  step(async () => {
    await api('POST', '/dashboard/v1/logout');
    csrf = '';
    say('Signed out.');
    await route();
  }),
);

$('sign-out-others').addEventListener(
  'click',
  step(async () => {
    const others = (await api('GET', '/dashboard/v1/sessions')).items.filter((s) => !s.current);
    for (const other of others) {
      try {
        await api('POST', `/dashboard/v1/sessions/${encodeURIComponent(other.id)}/revoke`);
      } catch (error) {
        // One that ended meanwhile is signed out already.
        if (!(error instanceof Problem && error.status === 404)) throw error;
      }
    }
    say(`Signed out everywhere else (${others.length === 1 ? 'one session' : `${others.length} sessions`}).`);
    await listSessions();
  }),
);

$('add-passkey').addEventListener(
  'click',
  step(async () => {
    await createPasskey(undefined);
    say('Passkey added.');
  }),
);

$('project-form').addEventListener(
  'submit',
  step(async () => {
    await api('PUT', '/dashboard/v1/session/project', { project_id: $('project-select').value });
    await route();
  }),
);

// ---- Invitations

function invitationStep(next) {
  $('address-form').hidden = next !== 'verify_email';
  $('code-form').hidden = true;
  $('credential-forms').hidden = next !== 'create_credential';
  $('accept-box').hidden = next !== 'accept';
}

/** Shows the sign-in form with the reason; the claimed invitation is accepted right after. */
function askToSignIn(reason) {
  acceptAfterSignIn = true;
  $('sign-in-reason').hidden = false;
  $('sign-in-reason').textContent = reason;
  show('sign-in');
}

/** The invitation token this page claimed, kept in memory only: signing out claims it again. */
let claimedInvite = '';

async function claimInvitation(token) {
  claimedInvite = token;
  const claim = await api('POST', '/dashboard/v1/invitations/claim', { token });
  csrf = claim.csrf_token;
  const role = claim.invitation.kind === 'ad_buyer' ? 'an advertiser' : 'a member';
  $('invitation-summary').textContent =
    `You are invited to “${claim.invitation.project_name}” as ${role}${claim.invitation.email ? ` (${claim.invitation.email})` : ''}.`;
  if (claim.next === 'sign_in')
    return askToSignIn(`${$('invitation-summary').textContent} This address has a login: sign in to accept.`);
  if (claim.next === 'accept') {
    // Accepting is the session's change: it takes the session's CSRF token, not the signup's.
    const session = await currentSession();
    if (!session) return askToSignIn(`${$('invitation-summary').textContent} Sign in to accept.`);
    $('accept-who').textContent =
      `You are signed in as ${session.display_name} (${session.email}): joining adds this login to the project.`;
  }
  invitationStep(claim.next);
  show('invitation');
}

/** What a link that cannot be used says, and what the person can do instead, by the link's kind. */
const LINK_PROBLEMS = {
  invitation: {
    link_invalid:
      'This invitation link does not work: it was revoked, or a newer one replaced it. Ask whoever invited you for a new one.',
    link_expired: 'This invitation link has expired. Ask whoever invited you for a new one.',
    invitation_consumed:
      'This invitation was accepted already. If that was you, sign in; otherwise ask whoever invited you for a new one.',
  },
  reset: {
    link_invalid:
      'This sign-in link does not work: it was used already, or a newer one replaced it. If you still need one, ask for a new one under “Forgot how you sign in” on the sign-in page.',
    link_expired:
      'This sign-in link has expired (it works for one hour). If you still need one, ask for a new one under “Forgot how you sign in” on the sign-in page.',
  },
};

/**
 * Claims a link's token. A link that cannot be used is said in words, and the page goes on as it
 * would without it (the sign-in form, or the signed-in person's page), never stuck on "Loading…".
 */
async function claimLink(kind, token) {
  try {
    await (kind === 'reset' ? claimReset(token) : claimInvitation(token));
  } catch (error) {
    const words =
      error instanceof Problem && Object.hasOwn(LINK_PROBLEMS[kind], error.code) ? LINK_PROBLEMS[kind][error.code] : '';
    if (!words) throw error;
    await route();
    say(words, true);
  }
}

$('address-form').addEventListener(
  'submit',
  step(async () => {
    await api('POST', '/dashboard/v1/signup/email', { email: $('address-email').value });
    $('code-form').hidden = false;
    say('A code is on its way to that address.');
    $('address-code').focus();
  }),
);

$('code-form').addEventListener(
  'submit',
  step(async () => {
    const verified = await api('POST', '/dashboard/v1/signup/email/verify', { code: $('address-code').value });
    say(`Address ${verified.email} confirmed.`);
    if (verified.next === 'sign_in') return askToSignIn('This address has a login: sign in to accept the invitation.');
    invitationStep(verified.next);
  }),
);

$('signup-password').addEventListener(
  'submit',
  step(async () => {
    const session = await api('POST', '/dashboard/v1/signup/password', {
      display_name: $('new-name').value,
      password: $('new-password').value,
    });
    await signedIn(session, `Welcome, ${session.display_name}: you joined “${session.project?.name}”.`);
  }),
);

$('signup-passkey').addEventListener(
  'click',
  step(async () => {
    const name = $('new-name');
    if (!name.reportValidity()) return;
    const session = await createPasskey({ display_name: name.value });
    await signedIn(session, `Welcome, ${session.display_name}: you joined “${session.project?.name}”.`);
  }),
);

$('accept').addEventListener(
  'click',
  step(async () => {
    const session = await api('POST', '/dashboard/v1/invitations/accept');
    await signedIn(session, `You joined “${session.project?.name}”.`);
  }),
);

$('accept-sign-out').addEventListener(
  'click',
  step(async () => {
    await api('POST', '/dashboard/v1/logout');
    csrf = '';
    say('Signed out. Join with your own login.');
    await claimLink('invitation', claimedInvite);
  }),
);

// ---- Resets

async function claimReset(token) {
  const claim = await api('POST', '/dashboard/v1/sign-in-resets/claim', { token });
  csrf = claim.csrf_token;
  say(`Resetting the sign-in of ${claim.email}.`);
  show('reset');
}

$('reset-password').addEventListener(
  'submit',
  step(async () => {
    const session = await api('POST', '/dashboard/v1/sign-in-resets/password', {
      password: $('reset-new-password').value,
    });
    await signedIn(session, 'Your new password is saved; every other session is signed out.');
  }),
);

$('reset-passkey').addEventListener(
  'click',
  step(async () => {
    const session = await createPasskey(undefined);
    await signedIn(session, 'Your new passkey is saved; every other session is signed out.');
  }),
);

// ---- Routing

async function currentSession() {
  try {
    const session = await api('GET', '/dashboard/v1/session');
    csrf = session.csrf_token;
    return session;
  } catch (error) {
    if (error instanceof Problem && error.status === 401) return undefined;
    throw error;
  }
}

async function route() {
  const session = await currentSession();
  const connectId = /^\/connect\/([^/]+)$/.exec(location.pathname)?.[1];
  if (!session) {
    $('sign-in-reason').hidden = !connectId;
    $('sign-in-reason').textContent = 'Sign in to approve or deny the agent that asks to connect.';
    show('sign-in');
    return;
  }
  if (connectId) {
    try {
      return await connect(decodeURIComponent(connectId), session);
    } catch (error) {
      if (!(error instanceof Problem && error.status === 404)) throw error;
      // A mistyped or unknown approval address: say so over the person's page, not over "Loading…".
      await home(session);
      say(
        'No agent asks to connect at this address. Check it against the one your agent shows, or ask it to start again.',
        true,
      );
      return;
    }
  }
  return home(session);
}

async function start() {
  // A token rides the fragment: take it, then remove it before anything else reads the URL.
  const fragment = new URLSearchParams(location.hash.slice(1));
  // A dashboard link (`#link=`, minted by an agent) is a short-lived member invitation link.
  const invite = fragment.get('invite') ?? fragment.get('link');
  const reset = fragment.get('reset');
  if (invite || reset) history.replaceState(null, '', location.pathname);
  if (invite) return claimLink('invitation', invite);
  if (reset) return claimLink('reset', reset);
  return route();
}

step(start)();
// A link opened in this very tab changes only the fragment: take its token the same way.
window.addEventListener('hashchange', () => step(start)());
