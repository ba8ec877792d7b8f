import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { shopOf } from '../http/auth.js';
import { servicesOf } from '../http/ctx.js';
import { errorResponses, Nullable } from '../http/schemas.js';
import { changeShopSettings, getShopSettings } from './settings.js';

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
};

export const ShopSettingsSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Str,
    test: Type.Boolean(),
    ...settingFields,
    public_key: Type.String({ description: 'Verifies notifications’ Content-Signature (PEM)' }),
    public_key_base64: Type.String({ description: 'The same key as the bare base64 body of the PEM' }),
  },
  { $id: 'ShopSettings' },
);

const ShopSettingsInput = Type.Partial(Type.Object(settingFields), {
  description: 'Any of the settings; fields not given stay as they are, unknown fields are ignored',
});

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
    async (request) => getShopSettings(servicesOf(request).db, shopOf(request).id),
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
        servicesOf(request).db,
        id,
        request.body as Record<string, unknown>,
      );
      // Seen at once by this process's next request; other processes re-read within seconds.
      request.server.shopAuthenticator.forget(id);
      return settings;
    },
  );
};
