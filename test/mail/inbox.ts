import { createServer } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One message as the SMTP server received it: the envelope and the parsed message. */
export interface Received {
  from: string;
  to: string[];
  mail: ParsedMail;
}

/**
 * A real SMTP server on 127.0.0.1 that keeps what it receives: plain SMTP, no login and no TLS,
 * as a local relay would be. Its port is chosen before it starts, so a test can point Kopek at it
 * while nothing listens there yet (the server is down) and start it later.
 */
export class Inbox {
  readonly received: Received[] = [];
  /** Recipients this server refuses for good (550), as a mailbox that does not exist. */
  readonly refuse = new Set<string>();
  #server: SMTPServer | undefined;
  private constructor(readonly port: number) {}

  static async onFreePort(): Promise<Inbox> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const address = probe.address();
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    if (address === null || typeof address === 'string') throw new Error('no port');
    return new Inbox(address.port);
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo: (address, _session, done) => {
        if (!this.refuse.has(address.address)) return done();
        done(Object.assign(new Error('No such mailbox here'), { responseCode: 550 }));
      },
      onData: (stream, session, done) => {
        simpleParser(stream)
          .then((mail) => {
            const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
            this.received.push({ from, to: session.envelope.rcptTo.map((r) => r.address), mail });
            done();
          })
          .catch(done);
      },
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Messages sent to `address`. */
  to(address: string): Received[] {
    return this.received.filter((r) => r.to.includes(address));
  }
}
