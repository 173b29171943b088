// The menu template per platform, without Electron (a stand-in records nothing but the
// app's name and whether it is packaged).
import { describe, expect, it, vi } from 'vitest';

const fake = vi.hoisted(() => ({ isPackaged: false }));
vi.mock('electron', () => ({
  app: {
    getName: () => 'Parley',
    get isPackaged() {
      return fake.isPackaged;
    },
  },
  Menu: { buildFromTemplate: () => ({}), setApplicationMenu: () => undefined },
}));

const { menuTemplate } = await import('./menu');

type Item = { role?: string; label?: string; accelerator?: string; submenu?: Item[]; click?: () => void };
const flat = (items: Item[]): Item[] => items.flatMap((item) => [item, ...flat(item.submenu ?? [])]);

describe('the application menu', () => {
  for (const platform of ['darwin', 'linux', 'win32'] as const) {
    it(`has the usual roles and Settings… on Cmd/Ctrl+, on ${platform}`, () => {
      const openSettings = vi.fn();
      const items = flat(menuTemplate({ openSettings }, platform) as Item[]);
      const roles = items.map((item) => item.role).filter(Boolean);
      for (const role of [
        'editMenu',
        'windowMenu',
        'close',
        'quit',
        'resetZoom',
        'zoomIn',
        'zoomOut',
        'togglefullscreen',
      ])
        expect(roles, role).toContain(role);
      const settings = items.filter((item) => item.label === 'Settings…');
      expect(settings).toHaveLength(1);
      expect(settings[0]!.accelerator).toBe('CmdOrCtrl+,');
      settings[0]!.click!();
      expect(openSettings).toHaveBeenCalledOnce();
      if (platform === 'darwin')
        expect(roles).toEqual(expect.arrayContaining(['about', 'hide', 'hideOthers', 'services']));
    });
  }

  it('offers reload and developer tools only while unpackaged', () => {
    const roles = () => flat(menuTemplate({ openSettings: () => undefined }, 'linux') as Item[]).map((i) => i.role);
    expect(roles()).toEqual(expect.arrayContaining(['reload', 'toggleDevTools']));
    fake.isPackaged = true;
    expect(roles()).not.toContain('toggleDevTools');
    expect(roles()).not.toContain('reload');
  });
});
