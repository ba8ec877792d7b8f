// Progressive enhancement of the hosted card form: groups the number as the buyer types, names the
// brand, and hints at a mistyped number or a past expiry before the form is sent. The form works
// the same without this file; the server checks everything again.
(() => {
  const BRANDS = [
    ['amex', 'American Express', /^3[47]/],
    ['diners', 'Diners Club', /^3(0[0-5]|[689])/],
    ['jcb', 'JCB', /^35(2[89]|[3-8])/],
    ['mir', 'Mir', /^220[0-4]/],
    ['unionpay', 'UnionPay', /^62/],
    ['maestro', 'Maestro', /^(5018|5020|5038|56|57|58|6304|6759|676[1-3])/],
    ['master', 'Mastercard', /^(5[1-5]|2(2[2-9]|[3-6]|7[01]|720))/],
    ['discover', 'Discover', /^(6011|65|64[4-9])/],
    ['visa', 'Visa', /^4/],
  ];
  const lang = document.documentElement.lang === 'ru' ? 'ru' : 'en';
  const HINTS = {
    en: { luhn: 'This card number looks mistyped.', expired: 'This card has expired.' },
    ru: { luhn: 'Похоже, в номере карты опечатка.', expired: 'Срок действия карты истёк.' },
  }[lang];

  const luhn = (digits) => {
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let d = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
    }
    return sum % 10 === 0;
  };

  const hint = (input, text) => {
    const id = `${input.id}-live`;
    let el = document.getElementById(id);
    if (!el) {
      el = document.createElement('p');
      el.id = id;
      el.className = 'error';
      el.setAttribute('aria-live', 'polite');
      input.parentElement.appendChild(el);
      const described = input.getAttribute('aria-describedby');
      input.setAttribute('aria-describedby', described ? `${described} ${id}` : id);
    }
    el.textContent = text;
  };

  for (const form of document.querySelectorAll('[data-card-form]')) {
    const number = form.querySelector('input[name="card_number"]');
    const brand = form.querySelector('[data-brand]');
    const month = form.querySelector('input[name="card_exp_month"]');
    const year = form.querySelector('input[name="card_exp_year"]');
    if (!number) continue;

    number.addEventListener('input', () => {
      const digits = number.value.replace(/\D/g, '').slice(0, 19);
      const found = BRANDS.find(([, , re]) => re.test(digits));
      const groups = found && found[0] === 'amex' ? [4, 6, 5] : [4, 4, 4, 4, 3];
      const parts = [];
      let at = 0;
      for (const size of groups) {
        if (at >= digits.length) break;
        parts.push(digits.slice(at, at + size));
        at += size;
      }
      const grouped = parts.join(' ');
      if (grouped !== number.value) number.value = grouped;
      if (brand) brand.textContent = found ? found[1] : '';
      if (digits.length < 12) hint(number, '');
    });
    number.addEventListener('blur', () => {
      const digits = number.value.replace(/\D/g, '');
      hint(number, digits.length >= 12 && !luhn(digits) ? HINTS.luhn : '');
    });

    const checkExpiry = () => {
      if (!month || !year) return;
      const m = Number(month.value);
      let y = Number(year.value);
      if (year.value.length === 2) y += 2000;
      if (!(m >= 1 && m <= 12) || y < 2000) return hint(year, '');
      const now = new Date();
      const past = y < now.getFullYear() || (y === now.getFullYear() && m < now.getMonth() + 1);
      hint(year, past ? HINTS.expired : '');
    };
    month?.addEventListener('blur', checkExpiry);
    year?.addEventListener('blur', checkExpiry);

    // One submission per click: a second click while the first is on its way does nothing.
    const owner = number.form;
    owner?.addEventListener('submit', () => {
      for (const button of owner.querySelectorAll('button[type="submit"]')) button.disabled = true;
    });
  }
})();
