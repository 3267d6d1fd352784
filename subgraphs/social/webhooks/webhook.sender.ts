import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { guardedLookup, refusalOf, type AddressPolicy } from './webhook-address.js';

/** Bytes of an answer read at most; the rest is dropped unread. */
const RESPONSE_CAP_BYTES = 4096;
/** Characters of an answer kept with the attempt. */
const EXCERPT_CHARS = 256;

export interface SendSettings extends AddressPolicy {
  /** The whole attempt, connect to last byte read: a 2xx within it is a success. */
  timeoutMs: number;
}

export interface OutgoingMessage {
  url: string;
  /** `whsec_` + base64, as the Standard Webhooks specification shapes secrets. */
  secret: string;
  /** The `webhook-id` header: the same on every attempt of one event. */
  id: string;
  body: string;
}

export interface SendOutcome {
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  durationMs: number;
}

/** The three Standard Webhooks headers for `body`, signed now. */
export function signedHeaders(
  message: Pick<OutgoingMessage, 'secret' | 'id' | 'body'>,
  now = new Date(),
): Record<string, string> {
  const timestamp = new Date(Math.floor(now.getTime() / 1000) * 1000);
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp.getTime() / 1000),
    'webhook-signature': new StandardWebhook(message.secret).sign(message.id, timestamp, message.body),
  };
}

/**
 * One POST of a signed message. Never throws: every way it can go wrong (refused address, no
 * connection, timeout, a non-2xx, a redirect, which is never followed) is an outcome to record.
 */
export function sendWebhook(message: OutgoingMessage, settings: SendSettings): Promise<SendOutcome> {
  const started = performance.now();
  const done = (outcome: Omit<SendOutcome, 'durationMs'>): SendOutcome => ({
    ...outcome,
    durationMs: Math.round(performance.now() - started),
  });
  const failure = (error: string, statusCode: number | null = null, responseExcerpt: string | null = null) =>
    done({ succeeded: false, statusCode, error, responseExcerpt });

  let url: URL;
  try {
    url = new URL(message.url);
  } catch {
    return Promise.resolve(failure('the URL is not valid'));
  }
  if (settings.production && url.protocol !== 'https:')
    return Promise.resolve(failure('refused: only https URLs are called in production'));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // An IP literal is connected to without a lookup, so it is checked here.
  const literalRefusal = isIP(host) ? refusalOf(host, settings) : null;
  if (literalRefusal) return Promise.resolve(failure(`refused: ${literalRefusal}`));

  const body = Buffer.from(message.body);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const request = transport.request(url, {
      method: 'POST',
      agent: false,
      lookup: guardedLookup(settings),
      headers: {
        'content-type': 'application/json',
        'content-length': String(body.length),
        'user-agent': 'social-publishing-webhooks/1',
        ...signedHeaders(message),
      },
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish(failure(`no complete answer within ${settings.timeoutMs / 1000} s`));
    }, settings.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish(
        failure(error.message.startsWith('refused:') ? error.message : `${error.code ?? 'error'}: ${error.message}`),
      ),
    );
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let read = 0;
      const conclude = () => {
        const excerpt = Buffer.concat(chunks).toString('utf8').slice(0, EXCERPT_CHARS) || null;
        if (status >= 200 && status < 300)
          finish(done({ succeeded: true, statusCode: status, error: null, responseExcerpt: excerpt }));
        else if (status >= 300 && status < 400)
          finish(failure(`answered a redirect (${status}), which is not followed`, status, excerpt));
        else finish(failure(`answered ${status}`, status, excerpt));
        request.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        if (read >= RESPONSE_CAP_BYTES) return;
        chunks.push(chunk.subarray(0, RESPONSE_CAP_BYTES - read));
        read += chunk.length;
        if (read >= RESPONSE_CAP_BYTES) conclude();
      });
      response.on('end', conclude);
      response.on('error', (error) => finish(failure(`the answer broke off: ${error.message}`, status)));
    });
    request.end(body);
  });
}
