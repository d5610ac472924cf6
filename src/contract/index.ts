/** The public API's contract: every request and response schema, in one place the API, the domain and the SDK share. */
export * from './common.ts';
export * from './media.ts';
export * from './posts.ts';
export * from './channels.ts';
export * from './webhooks.ts';
export * from './account.ts';
export * from './feeds.ts';
export * from './imports.ts';
export * from './approvals.ts';
export * from './series.ts';
export * from './preferences.ts';
