// Compiled by `npm run lint` (tsc), never run: the role API's results are typed from the
// contract to where they are read, so a field renamed in one place fails to compile in
// the others. Each `@ts-expect-error` below must stay an error.
import type { Caller } from '../agents/types';
import type { ContextKind, TextState, TurnTrust } from '../../shared/domain';
import type { AgentContext, HistoryEntry, RoleApiHandlers, RoleApiResult, SendResult } from '../role-api/protocol';
import { turnActionOf } from './turn-action';

/** A SendResult whose `threadRowId` was renamed: the reply guard's bookkeeping cannot read it. */
type Renamed = Omit<SendResult, 'threadRowId'> & { threadRow: number };
declare const renamed: Renamed;
// @ts-expect-error the reply guard reads `threadRowId` of what a send answered
turnActionOf(1, { command: 'send', result: renamed });

declare const sent: SendResult;
turnActionOf(1, { command: 'send', result: sent });
// @ts-expect-error a send answers no report
turnActionOf(1, { command: 'report', result: sent });

/** A handler table whose `send` answers with the renamed field. */
declare const handlers: RoleApiHandlers<Caller>;
export const drifted: RoleApiHandlers<Caller> = {
  ...handlers,
  // @ts-expect-error `send` must answer a SendResult
  send: (): Renamed => renamed,
};

/** A command's result is the contract's: `reply` answers a SendResult, `report` where it went. */
declare const reply: RoleApiResult<'reply'>;
export const row: number = reply.threadRowId;
declare const report: RoleApiResult<'report'>;
declare function readsSend(result: SendResult): void;
// @ts-expect-error a report to a conversation or a task is no send
readsSend(report);

// @ts-expect-error every command has its handler
export const missing: RoleApiHandlers<Caller> = { context: handlers.context };

/** The contract's enums say what the domain's types say, neither more nor less. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const sameTextStates: Same<HistoryEntry['state'], TextState> = true;
export const sameContextKinds: Same<AgentContext['kind'], ContextKind> = true;
export const sameTrust: Same<NonNullable<AgentContext['trust']>['level'], TurnTrust> = true;
