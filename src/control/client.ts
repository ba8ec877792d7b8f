import { connect } from 'node:net';
import { type ControlAnswer, ControlError, type ControlRequest } from './protocol.js';

// Long enough for a server that is still opening its store when the command arrives.
const ANSWER_TIMEOUT_MS = 120_000;

/**
 * Sends one request to the server's control socket. Resolves undefined when nothing accepts the
 * connection (the request was not delivered, so it is safe to try otherwise); once the request may have
 * been delivered, every failure rejects, since the command may have run.
 */
export function askServer(path: string, request: ControlRequest): Promise<ControlAnswer | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let connected = false;
    let text = '';
    const lost = (why: string) =>
      new ControlError(
        'failed',
        `${why}; the command may or may not have taken effect (check with \`kopek shop list\`)`,
      );
    socket.setEncoding('utf8');
    socket.once('connect', () => {
      connected = true;
      socket.setTimeout(ANSWER_TIMEOUT_MS);
      socket.end(`${JSON.stringify(request)}\n`);
    });
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(lost(`the Kopek server did not answer within ${ANSWER_TIMEOUT_MS / 1000} s`));
    });
    socket.once('error', (err) => {
      if (connected) reject(lost(`the connection to the Kopek server failed (${err.message})`));
      else resolve(undefined);
    });
    socket.once('end', () => {
      try {
        resolve(parseAnswer(text));
      } catch {
        reject(lost('the Kopek server closed the connection without an answer'));
      }
    });
  });
}

function parseAnswer(text: string): ControlAnswer {
  const answer = JSON.parse(text) as ControlAnswer;
  if (typeof answer !== 'object' || answer === null || typeof answer.ok !== 'boolean') throw new Error('bad');
  return answer;
}

export function unwrapAnswer(answer: ControlAnswer): unknown {
  if (answer.ok) return answer.result;
  throw new ControlError(answer.error.kind, answer.error.message);
}
