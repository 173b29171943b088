// `node --import dist/testing/electron/register.js dist/electron/main.js`: installs the
// hooks that make `electron` the stand-in.
import { register } from 'node:module';

register('./hooks.js', import.meta.url);
