// The stand-in's safeStorage. It encrypts for real — AES-256-GCM, so what the app
// stores is not the plain text and a changed byte fails to decrypt — but its key is a
// constant in this file, where Electron's comes from the OS keychain (Keychain, DPAPI,
// libsecret/kwallet). Anyone with this file can decrypt what it wrote.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { app } from './app';

const KEY = createHash('sha256').update('parley electron stand-in: not a secret').digest();
const VERSION = Buffer.from('v10'); // Chromium's OSCrypt prefix

export const safeStorage = {
  isEncryptionAvailable(): boolean {
    // On Linux Electron can tell only once the app is ready.
    return app.isReady();
  },
  getSelectedStorageBackend(): string {
    return 'basic_text';
  },
  encryptString(plainText: string): Buffer {
    if (!app.isReady())
      throw new Error(
        'Error while encrypting the text provided to safeStorage.encryptString. Encryption is not available.',
      );
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', KEY, iv);
    const body = Buffer.concat([cipher.update(plainText, 'utf8'), cipher.final()]);
    return Buffer.concat([VERSION, iv, cipher.getAuthTag(), body]);
  },
  decryptString(encrypted: Buffer): string {
    try {
      if (!encrypted.subarray(0, 3).equals(VERSION)) throw new Error('unknown version');
      const iv = encrypted.subarray(3, 15);
      const tag = encrypted.subarray(15, 31);
      const decipher = createDecipheriv('aes-256-gcm', KEY, iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(encrypted.subarray(31)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.');
    }
  },
};
