// A person's comment on the task, for its role: sent with Enter, its error shown below.
import { useState } from 'react';
import type { Task } from '../../../shared/domain';
import { TextWithCode } from '../../components/text-with-code';
import { useSendText } from '../../components/ui';
import { useTasks } from '../../state/tasks';

export function CommentBox({ task, onSending }: { task: Task; onSending: () => void }) {
  const comment = useTasks((s) => s.comment);
  const [text, setText] = useState('');
  const { submit, enterSends, busy, error } = useSendText(
    text,
    (body) => {
      onSending();
      return comment(task.id, body);
    },
    () => setText(''),
  );
  return (
    <form className="composer composer-inline" onSubmit={submit}>
      <div className="composer-box">
        <textarea
          aria-label="Comment"
          placeholder={`Comment for ${task.roleName}`}
          rows={1}
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={enterSends}
        />
        <button type="submit" className="btn btn-primary" disabled={busy || text.trim() === ''}>
          Comment
        </button>
      </div>
      {error && (
        <p className="composer-error" role="alert">
          <TextWithCode text={error} />
        </p>
      )}
    </form>
  );
}
