// A checkout page in a frame on the shop's page (docs/embedding.md) speaks the platform widget's
// protocol with the shop's window:
// - it tells the shop's window how the payment stands, and at its end where to go: {status} and
//   {url, status} (the shop's success, decline or fail address with token, status and uid), to the
//   shop's allowed origins only when it named them (<body data-frame-origins>);
// - it takes {css} from the shop's window: the shop's own look, applied when it is safe CSS (no
//   url(), no @import, no escapes, no selectors on the card fields' values) and ignored otherwise.
// Outside a frame (a phone's window of its own) it does nothing: the page works as at the top.
(() => {
  const body = document.body;
  if (!body || window.parent === window) return;
  const listed = (body.getAttribute('data-frame-origins') || '*').split(' ').filter(Boolean);
  const anyone = listed.includes('*');

  const tell = (message) => {
    for (const origin of anyone ? ['*'] : listed) {
      try {
        window.parent.postMessage(message, origin);
      } catch {
        // An origin the browser cannot parse: nothing to tell it.
      }
    }
  };

  const status = body.getAttribute('data-frame-status');
  const url = body.getAttribute('data-frame-url');
  if (status || url) tell(url ? { url, status } : { status });

  const MAX_CSS = 20000;
  // What could fetch, exfiltrate or hide such a thing: refused as a whole, never cleaned.
  const UNSAFE = [
    /url\s*\(/i,
    /image(-set)?\s*\(/i,
    /src\s*\(/i,
    /expression\s*\(/i,
    /@import/i,
    /@font-face/i,
    /@namespace/i,
    /\\/,
    /</,
    /\[[^\]]*value/i,
    /:has\s*\(/i,
    /javascript:/i,
    /behavior\s*:/i,
    /-moz-binding/i,
  ];
  const safeCss = (css) => {
    if (typeof css !== 'string' || css.length > MAX_CSS) return false;
    const bare = css.replace(/\/\*[\s\S]*?\*\//g, '');
    if (bare.includes('/*')) return false;
    return !UNSAFE.some((re) => re.test(bare));
  };

  let applied = null;
  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    if (!anyone && !listed.includes(event.origin)) return;
    const data = event.data;
    if (!data || typeof data !== 'object' || !('css' in data)) return;
    const css = data.css;
    if (!css || !safeCss(css)) return;
    try {
      // A constructed sheet: the page's policy allows no <style> element, and needs none.
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(css);
      document.adoptedStyleSheets = [...document.adoptedStyleSheets.filter((s) => s !== applied), sheet];
      applied = sheet;
      body.setAttribute('data-frame-css', 'applied');
    } catch {
      // Not CSS the browser can read: the page keeps its own look.
    }
  });
})();
