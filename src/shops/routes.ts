import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { shopOf } from '../http/auth.js';
import { servicesOf } from '../http/ctx.js';
import { errorResponses, Nullable } from '../http/schemas.js';
import { confirmSigningKey, rotateSigningKey, rotateWebhookSecret } from './notification-keys.js';
import { changeShopSettings, getShopSettings, ShopSettingsInput, settingsView } from './settings.js';

const Str = Type.String();
const Delays = Type.Array(Str, { description: 'ISO 8601 durations, PT1M to P30D; the last repeats' });
const RetrySchedule = Type.Object(
  { failed: Type.Optional(Delays), error: Type.Optional(Delays) },
  { description: "Delays between a failed renewal's attempts per outcome; null: the platform's rule" },
);
const QuietHours = Type.Object(
  { start: Str, end: Str },
  { description: 'Local hours (HH:MM) in which no renewal is charged; start after end crosses midnight' },
);

const settingFields = {
  three_d_secure: Type.Boolean(),
  email_notifications: Type.Boolean({ description: 'needs notification_email' }),
  notification_email: Nullable(Type.String({ format: 'email' })),
  return_url: Nullable(Type.String({ description: 'Absolute http(s) URL: where buyers return by default' })),
  time_zone: Type.String({ description: 'IANA name, e.g. Europe/Minsk: billing dates follow its calendar' }),
  retry_schedule: Nullable(RetrySchedule),
  quiet_hours: Nullable(QuietHours),
  notification_auth: Type.String({
    enum: ['basic', 'signature'],
    description:
      'basic: notifications carry HTTP Basic shop_id:secret_key, over https only; signature: no credentials (verify Kopek-Signature and Content-Signature)',
  }),
};

export const ShopSettingsSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Str,
    test: Type.Boolean(),
    ...settingFields,
    public_key: Type.String({ description: 'Verifies notifications’ Content-Signature (PEM)' }),
    public_key_base64: Type.String({ description: 'The same key as the bare base64 body of the PEM' }),
    webhook_secret: Type.String({
      description: 'whsec_…: the HMAC-SHA256 key of the Kopek-Signature header',
    }),
    webhook_secret_previous_until: Nullable(
      Type.String({ description: 'Until when the secret replaced by the last rotation still signs too' }),
    ),
    pending_public_key: Nullable(
      Type.String({ description: 'A new key pair, shown before it signs: confirm it to switch' }),
    ),
    pending_public_key_base64: Nullable(Str),
    frame_origins: Nullable(
      Type.Array(Str, {
        description: "Origins that may frame the shop's checkout pages; null: any site (docs/embedding.md)",
      }),
    ),
  },
  { $id: 'ShopSettings' },
);

export const shopRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['shop'];
  app.get(
    '/shop',
    {
      schema: {
        tags,
        summary: "The shop's settings and notification public key",
        response: { 200: ShopSettingsSchema, ...errorResponses },
      },
    },
    async (request) => getShopSettings(servicesOf(request), shopOf(request).id),
  );

  app.patch(
    '/shop',
    {
      schema: {
        tags,
        summary: "Change the shop's settings; answers them as they now are",
        body: ShopSettingsInput,
        response: { 200: ShopSettingsSchema, ...errorResponses },
      },
    },
    async (request) => {
      const id = shopOf(request).id;
      const settings = await changeShopSettings(
        servicesOf(request),
        id,
        request.body as Record<string, unknown>,
      );
      // Seen at once by this process's next request; other processes re-read within seconds.
      request.server.shopAuthenticator.forget(id);
      return settings;
    },
  );

  const keyRoutes = [
    [
      '/shop/webhook_secret/rotate',
      'A new webhook signing secret; the old one keeps signing beside it for 24 hours',
      rotateWebhookSecret,
    ],
    [
      '/shop/signing_key/rotate',
      'A new RSA key pair, pending: its public key is shown, the current key signs until confirmed',
      rotateSigningKey,
    ],
    [
      '/shop/signing_key/confirm',
      'The pending key pair signs notifications from now on (422 when none is pending)',
      confirmSigningKey,
    ],
  ] as const;
  for (const [url, summary, verb] of keyRoutes) {
    app.post(
      url,
      { schema: { tags, summary, response: { 200: ShopSettingsSchema, ...errorResponses } } },
      async (request) => {
        const services = servicesOf(request);
        const id = shopOf(request).id;
        const row = await verb(services, id);
        request.server.shopAuthenticator.forget(id);
        return settingsView(services, row);
      },
    );
  }
};
