// Sends the buyer on from a checkout's result page after a few seconds (the link's
// data-continue-after); without scripts the link stays for them to follow.
for (const link of document.querySelectorAll('a[data-continue-after]')) {
  const seconds = Number(link.getAttribute('data-continue-after')) || 3;
  setTimeout(() => window.location.assign(link.href), seconds * 1000);
}
