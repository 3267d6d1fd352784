import type { Transporter } from 'nodemailer';
import type { Config } from '../config.js';
import type { Logger } from '../observability/logger.js';

export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** Sends mail over SMTP (`SMTP_URL`), or, without it, writes each message to the log for development. */
export interface Mailer {
  readonly kind: 'smtp' | 'log';
  send(message: MailMessage): Promise<void>;
  close(): void;
}

const DEVELOPMENT_MAIL_NOTE =
  'SMTP_URL is unset, so this mail and any sign-in link in it are shown here, for development only; production refuses to start without SMTP_URL';

/**
 * `terminal`: where a person watching `npm start` reads a mail that was not sent, on lines of its own (a
 * sign-in link escaped inside a JSON log line is hard to copy); only when it is a terminal.
 */
export function createMailer(
  config: Config,
  logger: Logger,
  terminal: NodeJS.WriteStream | undefined = process.stderr,
): Mailer {
  const log = logger.child({ component: 'mail' });
  const url = config.env.SMTP_URL;
  if (!url) {
    // A sign-in link in a log is a sign-in for whoever reads the log: production refuses to start without
    // SMTP_URL (lib/production.ts), and this is the last line of that defence.
    if (config.isProduction)
      throw new Error('SMTP_URL is required in production: sign-in mail is never written to the log');
    return {
      kind: 'log',
      async send(message) {
        // Development without a mail server: the text (with any link in it) goes to the log instead, marked as such.
        log.warn(
          { to: message.to, subject: message.subject, text: message.text, developmentOnly: DEVELOPMENT_MAIL_NOTE },
          'mail not sent (SMTP_URL is unset)',
        );
        if (terminal?.isTTY) terminal.write(plainMail(message));
      },
      close() {},
    };
  }
  // nodemailer is loaded with the first mail, not at start: it costs every process a few MB of heap,
  // and most processes send no mail for a long while (sign-in links are its only use).
  let transport: Promise<Transporter> | undefined;
  return {
    kind: 'smtp',
    async send(message) {
      transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(url));
      await (await transport).sendMail(message);
      log.info({ to: message.to, subject: message.subject }, 'mail sent');
    },
    close() {
      // A transport that never loaded has nothing to close (its send already failed, saying why).
      void transport?.then(
        (opened) => opened.close(),
        () => undefined,
      );
    },
  };
}

/** A mail as a person reads it, framed, for the terminal of a development start. */
function plainMail(message: MailMessage): string {
  const rule = '-'.repeat(72);
  return [
    '',
    `${rule}`,
    `Mail not sent (SMTP_URL is unset; shown here for development only)`,
    `To: ${message.to}`,
    `Subject: ${message.subject}`,
    '',
    message.text.trimEnd(),
    rule,
    '',
  ].join('\n');
}
