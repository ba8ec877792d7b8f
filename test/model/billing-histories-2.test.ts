import { describeHistories, useHistoryStore } from './property.js';

/** More random billing histories (property.ts): spread over files, so CI's workers share them. */

useHistoryStore();
describeHistories('2 of 3');
