/** A failure of a `weft share` command: its message is printed as is; 2 = bad input, 1 = anything else. */
export class ShareCliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'ShareCliError';
  }
}

export const badInput = (message: string) => new ShareCliError(message, 2);
