// The desktop app's SecretBox (main/store/secret-box.ts): Electron's safeStorage, whose
// key lives in the OS keychain (macOS Keychain, Windows DPAPI, libsecret or KWallet on
// Linux). Call after app is ready: on Linux the keychain is known only then.
import { safeStorage } from 'electron';
import { log } from '../log';
import type { SecretBox } from '../store/secret-box';

/** The keychain box, or undefined when the system offers no encryption (secrets then stay as written). */
export function keychainSecretBox(): SecretBox | undefined {
  if (!safeStorage.isEncryptionAvailable()) {
    log.warn('no OS keychain to encrypt role secrets with: they are stored as written');
    return undefined;
  }
  if (process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text')
    log.warn('no keyring (libsecret or KWallet) found: role secrets are encrypted with a key that is not secret');
  return {
    protection: 'os-keychain',
    encrypt: (plain) => safeStorage.encryptString(plain),
    decrypt: (sealed) => safeStorage.decryptString(sealed),
  };
}
