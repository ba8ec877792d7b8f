/*
 * Kopek's payment widget, served at {checkout_url}/widget/be_gateway.js (docs/embedding.md): the
 * platform's documented widget API on a shop's own page, no framework, no dependency.
 *
 *   new BeGateway({
 *     checkout_url: 'https://checkout.example',
 *     token: '…',                       // a token from POST /ctp/api/checkouts, or instead:
 *     checkout: { iframe: true, public_key: '…', transaction_type: 'payment', test: true,
 *                 order: { amount: 100, currency: 'EUR', description: '…', tracking_id: '…' },
 *                 settings: { success_url, decline_url, fail_url, notification_url, language } },
 *     anchor: 'pay-here',               // optional: inline in that element instead of an overlay
 *     style: '.card { … }',             // optional: the form's look (safe CSS only)
 *     closeWidget: function (status) {} // successful, failed, pending, redirected, error or null
 *   }).createWidget();
 *
 * With a public key the checkout is made in the buyer's browser: the buyer can change its amount,
 * currency, test flag and tracking_id. Trust the signed notification, never the browser: check those
 * four in it before you deliver.
 */
(() => {
  const STATUSES = ['successful', 'failed', 'pending', 'redirected', 'error'];

  function originOf(url) {
    try {
      return new URL(url).origin;
    } catch (_e) {
      return null;
    }
  }

  function BeGateway(options) {
    this.options = options || {};
    this.status = null;
    this.closed = false;
  }

  BeGateway.prototype.createWidget = function () {
    const o = this.options;
    const base = typeof o.checkout_url === 'string' ? o.checkout_url.replace(/\/+$/, '') : '';
    this.origin = originOf(base);
    if (!this.origin) return this.close('error');
    const checkout = o.checkout || {};
    const framed = checkout.iframe !== false;
    const open = (token) => {
      const url = `${base}/widget/hpp.html?token=${encodeURIComponent(token)}`;
      if (!framed) {
        window.location.assign(url);
        return;
      }
      this.show(`${url}&iframe=${o.anchor ? 'inline' : 'overlay'}`);
    };
    if (typeof o.token === 'string' && o.token) {
      open(o.token);
      return this;
    }
    if (!checkout.public_key) return this.close('error');
    // The public-key integration: the checkout is made on the fly (see the warning above).
    const request = new XMLHttpRequest();
    request.open('POST', `${base}/widget/checkouts`);
    request.setRequestHeader('Content-Type', 'application/json');
    request.onload = () => {
      let answer = null;
      try {
        answer = JSON.parse(request.responseText);
      } catch (_e) {
        answer = null;
      }
      const token = answer?.checkout?.token;
      if (request.status === 201 && token) open(token);
      else this.close('error');
    };
    request.onerror = () => {
      this.close('error');
    };
    request.send(JSON.stringify({ checkout: checkout }));
    return this;
  };

  BeGateway.prototype.show = function (url) {
    const o = this.options;
    const size = o.size || { width: 320, height: 480 };
    const frame = document.createElement('iframe');
    frame.src = url;
    frame.title = 'Payment form';
    frame.setAttribute('frameborder', '0');
    frame.style.width = `${size.width}px`;
    frame.style.height = `${size.height}px`;
    frame.style.maxWidth = '100%';
    frame.style.border = '0';
    frame.style.display = 'block';
    frame.style.background = '#fff';
    this.frame = frame;

    const anchor = o.anchor ? document.getElementById(o.anchor) : null;
    if (anchor) {
      anchor.appendChild(frame);
      this.root = frame;
    } else {
      const shade = document.createElement('div');
      shade.setAttribute('data-begateway-overlay', '');
      const s = shade.style;
      s.position = 'fixed';
      s.top = '0';
      s.left = '0';
      s.right = '0';
      s.bottom = '0';
      s.zIndex = '2147483000';
      s.background = 'rgba(15, 23, 42, 0.6)';
      s.display = 'flex';
      s.alignItems = 'center';
      s.justifyContent = 'center';
      const box = document.createElement('div');
      box.style.position = 'relative';
      const close = document.createElement('button');
      close.type = 'button';
      close.textContent = '\u00d7';
      close.setAttribute('aria-label', 'Close');
      const c = close.style;
      c.position = 'absolute';
      c.top = '-2.2rem';
      c.right = '0';
      c.font = '1.5rem/1 sans-serif';
      c.background = 'transparent';
      c.color = '#fff';
      c.border = '0';
      c.cursor = 'pointer';
      close.addEventListener('click', () => {
        this.close(this.status);
      });
      box.appendChild(close);
      box.appendChild(frame);
      shade.appendChild(box);
      document.body.appendChild(shade);
      this.root = shade;
    }

    frame.addEventListener('load', () => {
      if (typeof o.style === 'string' && o.style)
        frame.contentWindow.postMessage({ css: o.style }, this.origin);
    });

    this.listener = (event) => {
      // Only the form in this widget's frame speaks for the payment.
      if (event.source !== frame.contentWindow || event.origin !== this.origin) return;
      const data = event.data;
      if (!data || typeof data !== 'object') return;
      if (STATUSES.indexOf(data.status) !== -1) this.status = data.status;
      if (typeof data.url === 'string' && /^https?:\/\//i.test(data.url)) {
        this.close(this.status);
        window.location.assign(data.url);
      }
    };
    window.addEventListener('message', this.listener);
  };

  BeGateway.prototype.close = function (status) {
    if (this.closed) return this;
    this.closed = true;
    if (this.listener) window.removeEventListener('message', this.listener);
    if (this.root?.parentNode) this.root.parentNode.removeChild(this.root);
    const callback = this.options.closeWidget;
    if (typeof callback === 'function') callback(STATUSES.indexOf(status) !== -1 ? status : null);
    return this;
  };

  window.BeGateway = BeGateway;
})();
