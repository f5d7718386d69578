// memgit audit UI: small progressive enhancements. Every page works without this file.
'use strict';
(function () {
  // Copy buttons: shown only when the clipboard is available.
  if (navigator.clipboard) {
    document.querySelectorAll('button.copy[data-copy]').forEach(function (button) {
      button.hidden = false;
      button.addEventListener('click', function () {
        navigator.clipboard.writeText(button.getAttribute('data-copy') || '').then(function () {
          button.textContent = 'copied';
          button.classList.add('copied');
          setTimeout(function () { button.textContent = 'copy'; button.classList.remove('copied'); }, 1200);
        });
      });
    });
  }
  // Keyboard: "/" focuses search; "g" then c/s/m/o goes to Commits, Sessions, Memory, Overview.
  var pendingG = false;
  var targets = { c: '/commits', s: '/sessions', m: '/tree', o: '/' };
  document.addEventListener('keydown', function (event) {
    var el = event.target;
    var typing = el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === '/') {
      var search = document.getElementById('top-q');
      if (search) { event.preventDefault(); search.focus(); search.select(); }
    } else if (pendingG && Object.prototype.hasOwnProperty.call(targets, event.key)) {
      // Under `memgit server` every store's pages live below /stores/{id}.
      var mount = /^\/stores\/[^/]+/.exec(window.location.pathname);
      window.location.assign((mount ? mount[0] : '') + targets[event.key]);
    }
    pendingG = event.key === 'g';
  });
})();
