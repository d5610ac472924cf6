/**
 * Turns what a mail is about into its subject, plain text and HTML, in the
 * reader's language (catalogue.ts). Every value put into the HTML is escaped:
 * post texts, channel names and networks' reasons come from outside.
 */
import { LANGUAGES, type Language } from '../contract/languages.ts';
import { fill, MAIL_TEXTS, type MailTexts } from './catalogue.ts';

export interface Letter {
  subject: string;
  text: string;
  html: string;
}

type Block = string | { heading: string; items: string[] };

interface Draft {
  subject: string;
  blocks: Block[];
  action?: { label: string; url: string };
  after?: string[];
  /** The settings page where the reader changes which mails they get. */
  choicesUrl?: string;
}

/** The catalogue's language for a stored preference: English when none is chosen or known. */
export function mailLanguage(preference: string | null | undefined): Language {
  return (LANGUAGES as readonly string[]).includes(preference ?? '') ? (preference as Language) : 'en';
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function render(draft: Draft, texts: MailTexts): Letter {
  const text: string[] = [];
  const html: string[] = [];
  for (const block of draft.blocks) {
    if (typeof block === 'string') {
      text.push(block);
      html.push(`<p>${escapeHtml(block)}</p>`);
    } else {
      text.push([block.heading, ...block.items.map((item) => `- ${item}`)].join('\n'));
      html.push(`<h3>${escapeHtml(block.heading)}</h3><ul>${block.items.map((item) => `<li>${escapeHtml(item)}</li>`).join('')}</ul>`);
    }
  }
  if (draft.action) {
    text.push(`${draft.action.label}:\n${draft.action.url}`);
    html.push(`<p><a href="${escapeHtml(draft.action.url)}">${escapeHtml(draft.action.label)}</a></p>`);
  }
  for (const line of draft.after ?? []) {
    text.push(line);
    html.push(`<p>${escapeHtml(line)}</p>`);
  }
  if (draft.choicesUrl) {
    text.push(`--\n${texts.footerChoices}: ${draft.choicesUrl}`);
    html.push(`<hr><p style="font-size:small;color:#555"><a href="${escapeHtml(draft.choicesUrl)}">${escapeHtml(texts.footerChoices)}</a></p>`);
  }
  return {
    subject: draft.subject,
    text: `${text.join('\n\n')}\n`,
    html: `<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">${html.join('\n')}</body></html>`,
  };
}

export function invitationLetter(language: Language, v: { inviter: string; account: string; link: string; days: number }): Letter {
  const t = MAIL_TEXTS[language];
  return render(
    {
      subject: fill(t.invitationSubject, v),
      blocks: [fill(t.invitationBody, v)],
      action: { label: t.invitationAction, url: v.link },
      after: [t.invitationIgnore],
    },
    t,
  );
}

export function resetLetter(language: Language, v: { link: string; minutes: number; choicesUrl: string }): Letter {
  const t = MAIL_TEXTS[language];
  return render(
    {
      subject: t.resetSubject,
      blocks: [fill(t.resetBody, v)],
      action: { label: t.resetAction, url: v.link },
      after: [t.resetIgnore],
      choicesUrl: v.choicesUrl,
    },
    t,
  );
}

export function postFailedLetter(language: Language, v: { channel: string; excerpt: string; reason: string; postUrl: string; choicesUrl: string }): Letter {
  const t = MAIL_TEXTS[language];
  return render(
    {
      subject: fill(t.postFailedSubject, v),
      blocks: [fill(t.postFailedBody, v), fill(t.networkSaid, v)],
      action: { label: t.postFailedAction, url: v.postUrl },
      choicesUrl: v.choicesUrl,
    },
    t,
  );
}

export function reconnectLetter(language: Language, v: { channel: string; reason: string; channelsUrl: string; choicesUrl: string }): Letter {
  const t = MAIL_TEXTS[language];
  return render(
    {
      subject: fill(t.reconnectSubject, v),
      blocks: [fill(t.reconnectBody, v)],
      action: { label: t.reconnectAction, url: v.channelsUrl },
      choicesUrl: v.choicesUrl,
    },
    t,
  );
}

export function expiringLetter(language: Language, v: { channel: string; when: string; channelsUrl: string; choicesUrl: string }): Letter {
  const t = MAIL_TEXTS[language];
  return render(
    {
      subject: fill(t.expiringSubject, v),
      blocks: [fill(t.expiringBody, v)],
      action: { label: t.reconnectAction, url: v.channelsUrl },
      choicesUrl: v.choicesUrl,
    },
    t,
  );
}

export interface DigestLine {
  channel: string;
  excerpt: string;
  /** For a failed post: why. */
  reason?: string;
}

export function digestLetter(
  language: Language,
  v: { weekly: boolean; since: string; published: DigestLine[]; failed: DigestLine[]; calendarUrl: string; choicesUrl: string },
): Letter {
  const t = MAIL_TEXTS[language];
  const counts = { published: v.published.length, failed: v.failed.length };
  const blocks: Block[] = [fill(t.digestIntro, { since: v.since })];
  if (v.published.length > 0)
    blocks.push({ heading: fill(t.digestPublished, { count: counts.published }), items: v.published.map((p) => `${p.channel}: ${p.excerpt}`) });
  if (v.failed.length > 0)
    blocks.push({
      heading: fill(t.digestFailed, { count: counts.failed }),
      items: v.failed.map((p) => `${p.channel}: ${p.excerpt} (${fill(t.networkSaid, { reason: p.reason ?? '' })})`),
    });
  return render(
    {
      subject: fill(v.weekly ? t.digestWeeklySubject : t.digestDailySubject, counts),
      blocks,
      action: { label: t.digestAction, url: v.calendarUrl },
      choicesUrl: v.choicesUrl,
    },
    t,
  );
}
