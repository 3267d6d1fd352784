/** One open stream, as shutdown sees it. */
export interface OpenStream {
  /** Ends it so that its client reconnects (elsewhere, or here after the restart) with its last cursor. */
  endForRestart(): void;
}

/**
 * The streams open on this instance, for shutdown: each ends the way its transport tells a client to
 * come back (WebSocket close 1012, the multipart closing boundary, the end of an SSE answer).
 */
export class LiveStreams {
  private readonly open = new Set<OpenStream>();
  closing = false;

  /** Registers a stream until the returned function is called. */
  track(stream: OpenStream): () => void {
    this.open.add(stream);
    return () => this.open.delete(stream);
  }

  endAll(): void {
    this.closing = true;
    for (const stream of [...this.open]) stream.endForRestart();
    this.open.clear();
  }
}
