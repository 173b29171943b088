// "On your behalf": what the roles of a conversation or a task said to other installations
// and heard from them (DESIGN §12.8) — each agent conversation, its texts in order with
// what came of each, who let it through and how the turn that took it ended — to read
// here or download as Markdown or JSON.
import { useEffect, useState } from 'react';
import { textOutcome, type Ledger, type LedgerEntry, type LedgerRootKind } from '../../shared/ledger';
import { ArrowInIcon, ArrowOutIcon } from '../components/icons';
import { Dialog, EmptyState, ErrorNote, Loading } from '../components/ui';
import { fullTime, shortTime } from '../format';
import { call, messageOf } from '../state/client';
import './ledger.css';

type Root = { kind: LedgerRootKind; id: number };

function download(name: string, type: string, content: string): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function fileName(root: Root, extension: string): string {
  return `parley-${root.kind}-${root.id}-on-your-behalf.${extension}`;
}

function Entry({ entry, ledger }: { entry: LedgerEntry; ledger: Ledger }) {
  const peerRole = `${entry.peer}/${entry.peerRole}`;
  const relayOf = entry.relayOf === null ? null : ledger.entries.find((other) => other.threadId === entry.relayOf);
  return (
    <section className="ledger-entry" aria-label={`${entry.localRole} and ${peerRole}`}>
      <h3>
        {entry.localRole} and {peerRole}
      </h3>
      <p className="muted small">
        Started by {entry.startedBy === 'local' ? entry.localRole : peerRole} {shortTime(entry.startedAt)};{' '}
        {entry.status === 'open' ? 'open' : `closed${entry.closeReason ? ` (${entry.closeReason})` : ''}`}
        {relayOf ? ` · relays what ${relayOf.peer}/${relayOf.peerRole} asked` : ''}
      </p>
      {entry.texts.length === 0 ? (
        <p className="muted small">No texts.</p>
      ) : (
        <ol className="ledger-texts">
          {entry.texts.map((text) => (
            <li key={text.id} className={`ledger-text ledger-${text.direction}`}>
              <p className="ledger-text-head">
                {text.direction === 'out' ? <ArrowOutIcon size={14} /> : <ArrowInIcon size={14} />}
                <strong>
                  #{text.seq}{' '}
                  {text.direction === 'out' ? `${entry.localRole} → ${peerRole}` : `${peerRole} → ${entry.localRole}`}
                </strong>
                <time dateTime={text.at} title={fullTime(text.at)}>
                  {shortTime(text.at)}
                </time>
              </p>
              <p className="ledger-body">{text.body}</p>
              <p className="ledger-outcome">{textOutcome(text, entry, shortTime)}</p>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

export function LedgerDialog({ root, onClose }: { root: Root; onClose: () => void }) {
  const [ledger, setLedger] = useState<Ledger | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => {
    setError(null);
    call('ledger.get', { root }).then(
      (result) => setLedger(result.ledger),
      (failure: unknown) => setError(messageOf(failure)),
    );
  };
  useEffect(load, [root.kind, root.id]);
  const exportAs = async (format: 'markdown' | 'json') => {
    try {
      if (format === 'json') {
        const { ledger: fresh } = await call('ledger.get', { root });
        download(fileName(root, 'json'), 'application/json', JSON.stringify(fresh, null, 2) + '\n');
      } else {
        const { markdown } = await call('ledger.get', { root, format: 'markdown' });
        download(fileName(root, 'md'), 'text/markdown', markdown ?? '');
      }
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const texts = ledger?.entries.reduce((sum, entry) => sum + entry.texts.length, 0) ?? 0;
  return (
    <Dialog
      title="On your behalf"
      description={
        ledger
          ? `What the roles of “${ledger.root.title}” said to other installations, and heard from them.`
          : 'What the roles here said to other installations, and heard from them.'
      }
      onClose={onClose}
      size="lg"
      footer={
        <>
          <button
            type="button"
            className="btn btn-secondary"
            disabled={!ledger}
            onClick={() => void exportAs('markdown')}
          >
            Download Markdown
          </button>
          <button type="button" className="btn btn-secondary" disabled={!ledger} onClick={() => void exportAs('json')}>
            Download JSON
          </button>
          <button type="button" className="btn btn-primary" onClick={onClose}>
            Close
          </button>
        </>
      }
    >
      {error && <ErrorNote onRetry={load}>{error}</ErrorNote>}
      {!ledger && !error && <Loading />}
      {ledger && ledger.entries.length === 0 && (
        <EmptyState title="Nothing was said on your behalf">
          When a role here writes to a role of another installation, every text and what came of it is kept here.
        </EmptyState>
      )}
      {ledger && ledger.entries.length > 0 && (
        <div className="ledger">
          <p className="muted small">
            {ledger.entries.length.toLocaleString()} agent{' '}
            {ledger.entries.length === 1 ? 'conversation' : 'conversations'}, {texts.toLocaleString()}{' '}
            {texts === 1 ? 'text' : 'texts'}
            {ledger.truncated ? '; the newest texts are left out here' : ''}.
          </p>
          {ledger.entries.map((entry) => (
            <Entry key={entry.threadId} entry={entry} ledger={ledger} />
          ))}
        </div>
      )}
    </Dialog>
  );
}
