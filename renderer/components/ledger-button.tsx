// Opens "On your behalf" (views/ledger.tsx, loaded when first opened) for a conversation or a task.
import { lazy, Suspense, useState } from 'react';
import type { LedgerRootKind } from '../../shared/ledger';
import { ArrowOutIcon } from './icons';

const LedgerDialog = lazy(() => import('../views/ledger').then((module) => ({ default: module.LedgerDialog })));

export function LedgerButton({ root }: { root: { kind: LedgerRootKind; id: number } }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        className="btn btn-ghost btn-sm"
        title="What the roles here said to other installations, and heard from them"
        onClick={() => setOpen(true)}
      >
        <ArrowOutIcon size={14} />
        On your behalf
      </button>
      {open && (
        <Suspense fallback={null}>
          <LedgerDialog root={root} onClose={() => setOpen(false)} />
        </Suspense>
      )}
    </>
  );
}
