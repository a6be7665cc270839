// Output into a closed pipe (`envhook status --json | true`, `envhook lint … | head -1`) ends
// quietly: the reader has what it wanted. Node reports the broken pipe as an 'error' event on
// process.stdout or process.stderr (SIGPIPE is ignored), which unhandled prints a stack trace
// and kills the process mid-command. Here the stream's further output is dropped instead, so the
// command still finishes what it was doing (an install is not cut off between two files) and
// exits with its own status. Any other write error is no broken pipe: it stays fatal.

/** For every command, once, before anything is written (cli/main.ts). */
export function endQuietlyOnClosedPipe(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      stream.write = () => true;
    });
  }
}
