// When the output of a container that ran to its end has all arrived. The engine closes an attached
// stream after the container's last output, which may come a little after `wait` says it exited:
// waiting for that close, rather than a fixed pause, costs nothing when the output is in already.
/** How long the output may trail the exit at most (an engine that keeps the stream open). */
const trailingOutputMs = 2_000;

/** Call right after attaching (the end may come before the exit is seen); await what it returns after `wait`. */
export function outputEnd(stream: NodeJS.ReadableStream, capMs = trailingOutputMs): () => Promise<void> {
  const ended = new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise<void>((resolve) => (timer = setTimeout(resolve, capMs)))]);
    clearTimeout(timer);
  };
}
