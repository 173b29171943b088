// A start that must not go on: a damaged or missing file, a data folder from a newer
// version. Its message is for people — what is wrong, with which file, and what to do —
// and `parley serve` prints it as it is and exits non-zero, without a stack.
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}
