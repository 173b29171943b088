// The home page of a new installation: a checklist of the three things that make
// Parley useful — an agent that answers, a connection, an ask. Each step ticks from
// what main reports (firstRun.get), read again as conversations, connections and roles
// change; the owner can hide the list.
import { lazy, Suspense, useEffect, useId, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import type { FirstRunState, Invitation } from '../../shared/api-contract';
import type { Conversation, Message, RoleView } from '../../shared/domain';
import { CheckIcon, CircleIcon } from '../components/icons';
import { CopyField, useAction } from '../components/ui';
import { oneLine } from '../format';
import { messageOf } from '../state/client';
import { selectConnections, useConnections } from '../state/connections';
import { selectConversations, useConversations } from '../state/conversations';
import { useFirstRun } from '../state/first-run';
import { selectRoles, useRoles } from '../state/roles';
import { useUi } from '../state/ui';
import { adapterLabel } from './adapter-label';

// The editor validates with the contract's schemas (zod): it loads when first opened.
const RoleEditor = lazy(() => import('./role-editor').then((module) => ({ default: module.RoleEditor })));
import './first-run.css';

/** What the Test button sends: short, and answered by any agent (the scripted one echoes it). */
export const TEST_MESSAGE = 'Hello! This is a test from the first-run checklist: please answer in one short sentence.';

export function FirstRunChecklist({ state, greeting }: { state: FirstRunState; greeting: ReactNode }) {
  const conversations = useConversations(selectConversations);
  const connections = useConnections(selectConnections);
  const roles = useRoles(selectRoles);
  const titleId = useId();
  // What the steps are made of changed: ask main again.
  useEffect(() => {
    void useFirstRun.getState().load();
  }, [conversations, connections, roles]);

  const { steps, role } = state;
  const done = [steps.agent, steps.connect, steps.ask].filter(Boolean).length;
  return (
    <section className="first-run" aria-labelledby={titleId}>
      <header className="first-run-head">
        {greeting}
        <h2 id={titleId} className="first-run-title">
          Get started
        </h2>
        <p className="muted">
          Three steps, {done} done. Each one ticks itself once it has happened, here or anywhere else in Parley.
        </p>
      </header>
      <ol className="first-run-steps">
        <Step done={steps.agent} title={role ? `Choose the agent for ${role.name}` : 'Make a role'}>
          <AgentStep state={state} />
        </Step>
        <Step done={steps.connect} title="Connect with someone">
          <ConnectStep role={role} done={steps.connect} />
        </Step>
        <Step done={steps.ask} title="Try an ask">
          <AskStep role={role} />
        </Step>
      </ol>
      <footer className="first-run-foot">
        {done === 3 && <p className="first-run-all-done">All set: your roles can work with your connections now.</p>}
        <button type="button" className="btn btn-ghost" onClick={() => void dismiss()}>
          {done === 3 ? 'Done' : 'Hide this checklist'}
        </button>
      </footer>
    </section>
  );
}

async function dismiss() {
  try {
    await useFirstRun.getState().dismiss();
  } catch (error) {
    useUi.getState().toast(messageOf(error), 'error');
  }
}

function Step({ done, title, children }: { done: boolean; title: string; children: ReactNode }) {
  const titleId = useId();
  return (
    <li className={`first-run-step${done ? ' is-done' : ''}`} aria-labelledby={titleId}>
      <span className="first-run-mark" aria-hidden="true">
        {done ? <CheckIcon size={16} /> : <CircleIcon size={16} />}
      </span>
      <div className="first-run-body">
        <h3 id={titleId}>
          {title}
          <span className="visually-hidden">{done ? ' (done)' : ' (to do)'}</span>
        </h3>
        {children}
      </div>
    </li>
  );
}

// ------------------------------------------------------------------ 1. the agent

/** The conversation with the role, once the person has one. */
function useConversationWith(role: RoleView | null): Conversation | undefined {
  const conversations = useConversations(selectConversations);
  return role ? conversations?.find((c) => c.roleId === role.id) : undefined;
}

type TestState =
  | { kind: 'idle' }
  | { kind: 'sending' }
  | { kind: 'waiting'; conversationId: number; sentId: number }
  | { kind: 'failed'; error: string };

function AgentStep({ state }: { state: FirstRunState }) {
  const { role, detected } = state;
  const navigate = useUi((s) => s.navigate);
  const [editing, setEditing] = useState(false);
  const [test, setTest] = useState<TestState>({ kind: 'idle' });
  const conversation = useConversationWith(role);
  const answer = useTestAnswer(test);

  if (!role)
    return (
      <>
        <p>Parley talks with you through roles: an agent with a name and instructions. There is none yet.</p>
        <div className="first-run-actions">
          <button
            type="button"
            className="btn btn-primary"
            onClick={() => navigate({ kind: 'settings', tab: 'roles' })}
          >
            Make a role
          </button>
        </div>
      </>
    );

  const runTest = async () => {
    setTest({ kind: 'sending' });
    try {
      const { open, send, loadDetail } = useConversations.getState();
      const target = conversation ?? (await open(role.id));
      await loadDetail(target.id);
      const sent = await send(target.id, TEST_MESSAGE);
      setTest({ kind: 'waiting', conversationId: target.id, sentId: sent.id });
    } catch (error) {
      setTest({ kind: 'failed', error: messageOf(error) });
    }
  };

  return (
    <>
      <p>
        <strong>{role.name}</strong> uses <strong>{adapterLabel[role.agent.adapter]}</strong>.
        {role.agent.adapter === 'scripted' &&
          ' That is the built-in rule agent: it echoes and relays, which is enough to try Parley out, but it does not think.'}
      </p>
      {detected && (
        <p className="first-run-note">
          <span className="first-run-note-label">Found when Parley was set up:</span> {detected.found}.
        </p>
      )}
      <div className="first-run-actions">
        <button
          type="button"
          className="btn btn-primary"
          disabled={test.kind === 'sending' || (test.kind === 'waiting' && answer === null)}
          onClick={() => void runTest()}
        >
          Test
        </button>
        <button type="button" className="btn btn-secondary" onClick={() => setEditing(true)}>
          Choose another agent…
        </button>
      </div>
      <TestResult test={test} answer={answer} role={role} />
      {editing && (
        <Suspense fallback={null}>
          <RoleEditor role={role} onClose={() => setEditing(false)} />
        </Suspense>
      )}
    </>
  );
}

/** The role's answer (or Parley's note of a failure) to the test message, once it came. */
function useTestAnswer(test: TestState): Message | null {
  const id = test.kind === 'waiting' ? test.conversationId : null;
  const detail = useConversations((s) => (id === null ? undefined : s.details[id]));
  return useMemo(() => {
    if (test.kind !== 'waiting' || !detail) return null;
    return detail.messages.find((m) => m.id > test.sentId && m.author.kind !== 'person') ?? null;
  }, [test, detail]);
}

function TestResult({ test, answer, role }: { test: TestState; answer: Message | null; role: RoleView }) {
  const navigate = useUi((s) => s.navigate);
  let text: ReactNode = null;
  let tone = '';
  if (test.kind === 'sending') text = 'Sending the test…';
  else if (test.kind === 'failed') {
    text = `The test could not be sent: ${test.error}`;
    tone = ' is-bad';
  } else if (test.kind === 'waiting' && !answer) text = `Waiting for ${role.name}’s agent to answer…`;
  else if (test.kind === 'waiting' && answer?.author.kind === 'role') {
    text = (
      <>
        It works. {role.name} answered: <q>{oneLine(answer.body, 160)}</q>
      </>
    );
    tone = ' is-good';
  } else if (test.kind === 'waiting' && answer) {
    text = <>The test failed. {oneLine(answer.body, 300)}</>;
    tone = ' is-bad';
  }
  return (
    <div className={`first-run-result${tone}`} role="status">
      {text && <p>{text}</p>}
      {test.kind === 'waiting' && (
        <button
          type="button"
          className="link-button small"
          onClick={() => navigate({ kind: 'conversation', id: test.conversationId })}
        >
          Open the conversation with {role.name}
        </button>
      )}
    </div>
  );
}

// ------------------------------------------------------------------ 2. a connection

function ConnectStep({ role, done }: { role: RoleView | null; done: boolean }) {
  const connections = useConnections(selectConnections);
  const live = connections?.filter((c) => c.status !== 'revoked') ?? [];
  const [expose, setExpose] = useState(true);
  const [another, setAnother] = useState(false);
  const exposeId = useId();
  const roles = role && expose ? [role.name] : [];
  const showPairing = !done || another;
  return (
    <>
      {!done && (
        <p>
          Parley works with the Parley of people you trust: your roles can ask theirs for help, and theirs can ask
          yours. One of you makes an invitation and sends it to the other (by chat or email); the other pastes it in. It
          works once.
        </p>
      )}
      {live.length > 0 && (
        <p className="first-run-connected">
          Connected with {live.map((c) => c.name).join(', ')}.{' '}
          <button
            type="button"
            className="link-button"
            onClick={() => useUi.getState().navigate({ kind: 'settings', tab: 'connections' })}
          >
            See connections
          </button>
        </p>
      )}
      {done && !another && (
        <div className="first-run-actions">
          <button type="button" className="btn btn-secondary" onClick={() => setAnother(true)}>
            Connect with someone else
          </button>
        </div>
      )}
      {showPairing && role && (
        <label className="check first-run-expose" htmlFor={exposeId}>
          <input id={exposeId} type="checkbox" checked={expose} onChange={(e) => setExpose(e.target.checked)} />
          <span>Let their roles ask {role.name}</span>
        </label>
      )}
      {showPairing && (
        <div className="first-run-pair">
          <InviteInline roles={roles} />
          <AcceptInline roles={roles} />
        </div>
      )}
    </>
  );
}

function InviteInline({ roles }: { roles: string[] }) {
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const make = () =>
    void run(async () => {
      try {
        setError(null);
        setInvitation(await useConnections.getState().invite(roles));
      } catch (caught) {
        setError(messageOf(caught));
      }
    });
  return (
    <div className="first-run-panel">
      <h4>Invite someone</h4>
      {invitation ? (
        <>
          <CopyField label="Invitation code" value={invitation.code} copyLabel="Copy code" multiline />
          <p className="muted small">
            Send it to them. It works once and expires {new Date(invitation.expiresAt).toLocaleString()}.
          </p>
        </>
      ) : (
        <>
          <p className="muted small">Make a code to send to the other person.</p>
          <button type="button" className="btn btn-secondary" disabled={busy} onClick={make}>
            Invite
          </button>
        </>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

function AcceptInline({ roles }: { roles: string[] }) {
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const fieldId = useId();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (code.trim().length < 10) return setError('Paste the whole code, or the parley:// link.');
    setError(null);
    void run(async () => {
      try {
        const connection = await useConnections.getState().accept(code.trim(), roles);
        useUi.getState().toast(`Connected to ${connection.name}`);
        setCode('');
      } catch (caught) {
        setError(messageOf(caught));
      }
    });
  };
  return (
    <form className="first-run-panel" onSubmit={submit}>
      <h4>
        <label htmlFor={fieldId}>Accept an invitation</label>
      </h4>
      <textarea
        id={fieldId}
        rows={2}
        spellCheck={false}
        value={code}
        placeholder="Paste the code or the parley:// link you were sent"
        onChange={(event) => setCode(event.target.value)}
      />
      <button type="submit" className="btn btn-secondary" disabled={busy}>
        {busy ? 'Connecting…' : 'Accept'}
      </button>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

// ------------------------------------------------------------------ 3. an ask

const ADDRESS = /^[^\s/]+\/[^\s/:]+$/;

function AskStep({ role }: { role: RoleView | null }) {
  const connections = useConnections(selectConnections);
  const addresses = useMemo(
    () =>
      (connections ?? [])
        .filter((c) => c.status === 'active')
        .flatMap((c) => c.peerRoles.map((r) => ({ address: `${c.name}/${r.name}`, description: r.description }))),
    [connections],
  );
  const [to, setTo] = useState('');
  const [question, setQuestion] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sentIn, setSentIn] = useState<number | null>(null);
  const [busy, run] = useAction();
  const listId = useId();
  const toId = useId();
  const questionId = useId();
  const conversation = useConversationWith(role);
  const navigate = useUi((s) => s.navigate);
  // Offer the first address as soon as there is one.
  useEffect(() => {
    if (!to && addresses[0]) setTo(addresses[0].address);
  }, [addresses, to]);

  if (!role) return <p className="muted">Once there is a role, it can ask the roles of your connections.</p>;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const address = to.trim();
    if (!ADDRESS.test(address)) return setError('Write whom to ask as PEER/ROLE, for example bob/researcher.');
    if (!question.trim()) return setError('Write a question.');
    setError(null);
    void run(async () => {
      try {
        const target = conversation ?? (await useConversations.getState().open(role.id));
        await useConversations.getState().send(target.id, `ask ${address}: ${question.trim()}`);
        setSentIn(target.id);
        setQuestion('');
      } catch (caught) {
        setError(messageOf(caught));
      }
    });
  };
  return (
    <>
      <p>
        Ask one of their roles a question through {role.name}. {role.name} sends it over the connection; the answer
        comes back into your conversation with {role.name}, and you can follow the whole exchange.
      </p>
      {addresses.length === 0 && (
        <p className="muted small">
          No role of a connection is open to you yet: once someone connects and lets you address a role, it is offered
          here.
        </p>
      )}
      <form className="first-run-ask" onSubmit={submit}>
        <label className="field" htmlFor={toId}>
          <span className="field-label">Whom to ask (PEER/ROLE)</span>
          <input
            id={toId}
            list={listId}
            value={to}
            autoComplete="off"
            spellCheck={false}
            placeholder="bob/researcher"
            onChange={(event) => setTo(event.target.value)}
          />
          <datalist id={listId}>
            {addresses.map((a) => (
              <option key={a.address} value={a.address}>
                {a.description}
              </option>
            ))}
          </datalist>
        </label>
        <label className="field grow" htmlFor={questionId}>
          <span className="field-label">Question</span>
          <input
            id={questionId}
            value={question}
            placeholder="What should I read first about…?"
            onChange={(event) => setQuestion(event.target.value)}
          />
        </label>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          Ask
        </button>
      </form>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {sentIn !== null && (
        <p className="first-run-result" role="status">
          Sent to {role.name}.{' '}
          <button type="button" className="link-button" onClick={() => navigate({ kind: 'conversation', id: sentIn })}>
            Follow it in the conversation
          </button>
        </p>
      )}
    </>
  );
}
