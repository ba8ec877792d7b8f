/**
 * The notifications feature's face: what other features may use of it. Every feature that changes
 * a resource writes its events through the outbox (`eventInsert`, `eventsInsert`, the deliveries
 * they start); the cabinet lists, shows and resends notifications, joins events with their
 * deliveries, and shows the headers and body a notification is sent with. Nothing else of
 * `notifications/` is for use outside it (the composition root aside).
 */
export { notificationBody } from './attempt.js';
export { KOPEK_SIGNATURE_HEADER, sendsBasic } from './kopek-signature.js';
export {
  type Announcement,
  delivered,
  deliveriesOf,
  EVENT_COLUMNS,
  EVENT_INSERT_COLUMNS,
  eventInsert,
  eventsInsert,
  mailStatusOf,
} from './outbox.js';
export { EVENTS_WITH_DELIVERY } from './repository.js';
export {
  getNotificationAsSent,
  listNotifications,
  type NotificationView,
  resendNotification,
} from './service.js';
export { signHere } from './signer.js';
