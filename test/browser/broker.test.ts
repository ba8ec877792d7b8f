import { describe, expect, it } from 'vitest';
import { chromiumPath, FULL_CHROMIUM, HEADLESS_SHELL } from './broker.js';

describe('the browser the tests drive', () => {
  it("is Debian's headless shell when it is installed", () => {
    expect(chromiumPath({}, (path) => path === HEADLESS_SHELL || path === FULL_CHROMIUM)).toBe(
      HEADLESS_SHELL,
    );
  });

  it('is the full chromium when the headless shell is not installed', () => {
    expect(chromiumPath({}, (path) => path === FULL_CHROMIUM)).toBe(FULL_CHROMIUM);
  });

  it('is the one KOPEK_TEST_CHROMIUM names, installed or not', () => {
    expect(chromiumPath({ KOPEK_TEST_CHROMIUM: FULL_CHROMIUM }, () => true)).toBe(FULL_CHROMIUM);
    expect(chromiumPath({ KOPEK_TEST_CHROMIUM: '/opt/chrome/chrome' }, () => false)).toBe(
      '/opt/chrome/chrome',
    );
  });
});
