// "Copy" buttons of read-only fields (the cabinet's payment links): a button[data-copy] copies the
// value of the input it names and says so in its live region. Without scripts the buttons stay
// hidden and the field can be selected and copied by hand.
for (const button of document.querySelectorAll('button[data-copy]')) {
  const input = document.getElementById(button.dataset.copy);
  const status = document.getElementById(`${button.dataset.copy}-copied`);
  if (!input) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    input.select();
    let copied = false;
    try {
      await navigator.clipboard.writeText(input.value);
      copied = true;
    } catch {
      copied = document.execCommand?.('copy') === true;
    }
    if (status) status.textContent = copied ? button.dataset.copied : button.dataset.failed;
  });
}
