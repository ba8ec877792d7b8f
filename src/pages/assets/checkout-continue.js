// Sends the buyer on from a checkout's result page after a few seconds (the link's
// data-continue-after); without scripts the link stays for them to follow. In a frame on the shop's
// page, frame.js tells the shop's window where to go instead: the shop's page never loads in the frame.
if (!(document.body.classList.contains('framed') && window.parent !== window)) {
  for (const link of document.querySelectorAll('a[data-continue-after]')) {
    const seconds = Number(link.getAttribute('data-continue-after')) || 3;
    setTimeout(() => window.location.assign(link.href), seconds * 1000);
  }
}
