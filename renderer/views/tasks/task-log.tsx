// A task's log: comments, the agent's output and reports, notices, and each ask its
// turns made, under the entry of the turn that made it.
import type { ReactNode } from 'react';
import type { TaskLogEntry } from '../../../shared/domain';
import { AskLine, type AskPlaces } from '../../components/ask-state';
import { Markdown } from '../../components/markdown';
import { TextWithCode } from '../../components/text-with-code';
import { Avatar } from '../../components/ui';
import { fullTime, shortTime } from '../../format';
import type { AskLink, LoneAsks } from '../../ask-facts';

/** The log in order, with each ask under the entry its turn posted, or alone where it was made. */
export function TaskLog({ log, asks, roleName }: { log: TaskLogEntry[]; asks: AskPlaces; roleName: string }) {
  const lone = [...asks.alone].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.turnId - b.turnId));
  const rows: ReactNode[] = [];
  let next = 0;
  const loneRow = (row: LoneAsks) => (
    <li key={`asks-${row.turnId}`} className="log-entry log-asks">
      <Avatar name={roleName} size="sm" square />
      <div className="log-content">
        <div className="message-meta">
          <strong>{roleName}</strong>
          <time dateTime={row.at} title={fullTime(row.at)}>
            {shortTime(row.at)}
          </time>
        </div>
        {row.links.map((link) => (
          <AskLine key={link.textId} link={link} asked />
        ))}
      </div>
    </li>
  );
  for (const entry of log) {
    while (next < lone.length && lone[next]!.at < entry.createdAt) rows.push(loneRow(lone[next++]!));
    rows.push(<LogEntry key={entry.id} entry={entry} asks={asks.under.get(entry.id)} />);
  }
  while (next < lone.length) rows.push(loneRow(lone[next++]!));
  return <ol className="log">{rows}</ol>;
}

const logLabel: Record<TaskLogEntry['kind'], string> = {
  comment: 'commented',
  output: 'worked on it',
  report: 'reported',
  notice: '',
  status: '',
};

function LogEntry({ entry, asks }: { entry: TaskLogEntry; asks?: AskLink[] }) {
  const time = (
    <time dateTime={entry.createdAt} title={fullTime(entry.createdAt)}>
      {shortTime(entry.createdAt)}
    </time>
  );
  if (entry.kind === 'notice' || entry.kind === 'status')
    return (
      <li className={`log-entry log-${entry.kind}`}>
        <span className="log-line">
          {entry.kind === 'status' && <strong>{entry.author.name} </strong>}
          <TextWithCode text={entry.body} />
        </span>
        {time}
      </li>
    );
  return (
    <li className={`log-entry log-${entry.kind}`}>
      <Avatar name={entry.author.name} size="sm" square={entry.author.kind === 'role'} />
      <div className="log-content">
        <div className="message-meta">
          <strong>{entry.author.name}</strong>
          <span className="muted">{logLabel[entry.kind]}</span>
          {time}
        </div>
        {entry.author.kind === 'person' ? <p className="message-text">{entry.body}</p> : <Markdown text={entry.body} />}
        {asks?.map((link) => (
          <AskLine key={link.textId} link={link} />
        ))}
      </div>
    </li>
  );
}
