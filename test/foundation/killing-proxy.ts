import type { ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback proxy in front of the gateway that, when armed, lets the gateway answer a payment in
 * full, then kills the process that sent it (an API or a billing process) before handing the answer
 * on: the charge is made, its answer lost.
 */
export class KillingProxy {
  readonly server: Server;
  #victim: ChildProcess | undefined;
  payments = 0;

  constructor(private readonly target: URL) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const out = httpRequest(
          {
            host: this.target.hostname,
            port: this.target.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
          },
          (answer: IncomingMessage) => {
            const body: Buffer[] = [];
            answer.on('data', (c: Buffer) => body.push(c));
            answer.on('end', () => {
              const isPayment = req.method === 'POST' && req.url === '/transactions/payments';
              if (isPayment) this.payments++;
              const victim = this.#victim;
              if (isPayment && victim) {
                this.#victim = undefined;
                victim.once('exit', () => res.destroy());
                victim.kill('SIGKILL');
                return;
              }
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.end(Buffer.concat(body));
            });
          },
        );
        out.on('error', () => res.destroy());
        out.end(Buffer.concat(chunks));
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next payment's answer kills `victim` instead of reaching it. */
  killOnNextPayment(victim: ChildProcess): void {
    this.#victim = victim;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
