import type { Db } from '../database';
import { createInstallation } from './0001-create-installation';
import { createPeople } from './0002-create-people';
import { createRoles } from './0003-create-roles';
import { createConversations } from './0004-create-conversations';
import { createTasks } from './0005-create-tasks';
import { createRuns } from './0006-create-runs';
import { createConnections } from './0007-create-connections';
import { createAgentConversations } from './0008-create-agent-conversations';
import { dropThreadSeqs } from './0009-drop-thread-seqs';
import { indexInputsByText } from './0010-index-inputs-by-text';
import { neverReuseIds } from './0011-never-reuse-ids';
import { nameWireThreadIds } from './0012-name-wire-thread-ids';
import { recordConnectionProvenance } from './0013-connection-provenance';
import { createSearchAndSettings } from './0014-search-and-settings';
import { summariseThreadLists } from './0015-thread-list-summaries';
import { addApprovals } from './0016-approvals';
import { createAttention } from './0017-attention';
import { keepAskState } from './0018-ask-state';
import { keepAgentsOutOfTheDataFolder } from './0019-agent-sandbox';
import { addConnectionTrust } from './0020-connection-trust';
import { placeholder21 } from './0021-placeholder';
import { indexApprovalOrder } from './0022-approval-order';
import { keepTurnSignals } from './0023-turn-signals';
import { withdrawAndPeerPause } from './0024-withdraw-and-peer-pause';
import { recordReach } from './0025-reach';
import { recordRelations } from './0026-relations';
import { rememberChoices } from './0027-remember';
import { recordRelays } from './0028-relays';
import { indexAskLookup } from './0029-ask-lookup';

export interface Migration {
  version: number;
  name: string;
  up: (db: Db) => void;
  /** 'off': the run this step is in goes with foreign keys off, checked before commit (see migrate.ts). */
  foreignKeys?: 'off';
}

/** Every schema version in order; entry i brings the database to version i + 1. */
export const migrations: readonly Migration[] = [
  { version: 1, name: 'create-installation', up: createInstallation },
  { version: 2, name: 'create-people', up: createPeople },
  { version: 3, name: 'create-roles', up: createRoles },
  { version: 4, name: 'create-conversations', up: createConversations },
  { version: 5, name: 'create-tasks', up: createTasks },
  { version: 6, name: 'create-runs', up: createRuns },
  { version: 7, name: 'create-connections', up: createConnections },
  { version: 8, name: 'create-agent-conversations', up: createAgentConversations },
  { version: 9, name: 'drop-thread-seqs', up: dropThreadSeqs },
  { version: 10, name: 'index-inputs-by-text', up: indexInputsByText },
  { version: 11, name: 'never-reuse-ids', up: neverReuseIds, foreignKeys: 'off' },
  { version: 12, name: 'name-wire-thread-ids', up: nameWireThreadIds },
  { version: 13, name: 'connection-provenance', up: recordConnectionProvenance },
  { version: 14, name: 'search-and-settings', up: createSearchAndSettings },
  { version: 15, name: 'thread-list-summaries', up: summariseThreadLists },
  { version: 16, name: 'approvals', up: addApprovals, foreignKeys: 'off' },
  { version: 17, name: 'attention', up: createAttention },
  { version: 18, name: 'ask-state', up: keepAskState },
  { version: 19, name: 'agent-sandbox', up: keepAgentsOutOfTheDataFolder },
  { version: 20, name: 'connection-trust', up: addConnectionTrust },
  { version: 21, name: 'placeholder', up: placeholder21 },
  { version: 22, name: 'approval-order', up: indexApprovalOrder },
  { version: 23, name: 'turn-signals', up: keepTurnSignals },
  { version: 24, name: 'withdraw-and-peer-pause', up: withdrawAndPeerPause },
  { version: 25, name: 'reach', up: recordReach },
  { version: 26, name: 'relations', up: recordRelations },
  { version: 27, name: 'remember', up: rememberChoices },
  { version: 28, name: 'relays', up: recordRelays },
  { version: 29, name: 'ask-lookup', up: indexAskLookup },
];
