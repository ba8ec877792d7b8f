// Submits a form marked data-auto-submit as soon as the page is read (3-D Secure's frictionless
// step has nothing to ask); without scripts its button remains.
for (const form of document.querySelectorAll('form[data-auto-submit]')) form.submit();
