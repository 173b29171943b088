// What a continued session hears of its owner's instructions, as a table; and the record
// per session, kept apart per adapter and safe whatever session ID an agent chose.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { digest, instructionsForContinued, instructionsRecord } from './instructions-record';

const WITHDRAWN = 'None: the earlier ones no longer apply.';

describe('the owner’s instructions in a continued session', () => {
  it.each([
    ['told these already', digest('Answer in French.'), 'Answer in French.', undefined],
    ['told others', digest('Answer in French.'), 'Answer in Danish.', 'Answer in Danish.'],
    ['not known what it was told', null, 'Answer in French.', 'Answer in French.'],
    ['had some, now none', digest('Answer in French.'), '', WITHDRAWN],
    ['had none, still none', digest(''), '', undefined],
    ['not known, none', null, '', ''],
  ])('%s', (_, before, instructions, heard) => {
    expect(instructionsForContinued(before, instructions)).toBe(heard);
  });

  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-instructions-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps a private digest per adapter and session, in a file named safely', () => {
    const work = path.join(dir, 'work');
    const acp = instructionsRecord(work, 'acp');
    acp.write('../../etc/passwd', 'Answer in French.');
    expect(acp.read('../../etc/passwd')).toBe(digest('Answer in French.'));
    expect(instructionsRecord(work, 'codex').read('../../etc/passwd')).toBeNull();
    const sessions = path.join(dir, 'sessions');
    const [file] = readdirSync(sessions);
    expect(file).toBe('acp-.._.._etc_passwd.instructions');
    expect(statSync(sessions).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(sessions, file!)).mode & 0o777).toBe(0o600);
  });
});
