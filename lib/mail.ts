import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from './config.js';
import type { Logger } from './logger.js';

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

export function createMailer(config: Config, logger: Logger): Mailer {
  const log = logger.child({ component: 'mail' });
  const url = config.env.SMTP_URL;
  if (!url) {
    return {
      kind: 'log',
      async send(message) {
        // Development without a mail server: the text (with any link in it) goes to the log instead.
        log.info({ to: message.to, subject: message.subject, text: message.text }, 'mail not sent (SMTP_URL is unset)');
      },
      close() {},
    };
  }
  const transport: Transporter = nodemailer.createTransport(url);
  return {
    kind: 'smtp',
    async send(message) {
      await transport.sendMail(message);
      log.info({ to: message.to, subject: message.subject }, 'mail sent');
    },
    close() {
      transport.close();
    },
  };
}
