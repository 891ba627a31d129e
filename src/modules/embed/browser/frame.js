// The chat page an embedding page frames (/embed/{publicId}). Its parent's origin is the first of
// location.ancestorOrigins (else the referrer's origin), and must be one of the twin's authorized origins,
// which the service wrote into the page; postMessage goes to that origin only and is accepted from the
// parent window on that origin only. The session's token comes from the parent (embed.js opened it from
// the page, so the browser set the Origin the service checked). Answers stream over SSE.
(function () {
  'use strict';
  var root = document.getElementById('twin-embed');
  var config = JSON.parse(root.getAttribute('data-config'));
  var log = document.getElementById('twin-log');
  var form = document.getElementById('twin-form');
  var input = document.getElementById('twin-input');
  var status = document.getElementById('twin-status');
  var token = null;
  var conversationId = null;
  var busy = false;

  function parentOrigin() {
    if (window.parent === window) return null;
    var ancestors = location.ancestorOrigins;
    if (ancestors && ancestors.length > 0) return ancestors[0];
    try {
      return document.referrer ? new URL(document.referrer).origin : null;
    } catch (error) {
      return null;
    }
  }

  var page = parentOrigin();
  if (!page || config.origins.indexOf(page) === -1) {
    status.textContent = 'This page may not embed this Digital Twin.';
    form.hidden = true;
    return;
  }

  function tell(message) {
    window.parent.postMessage(message, page);
  }

  function transcript(role, text, final) {
    if (config.liveTranscript) tell({ type: 'twin:transcript', role: role, text: text, final: final });
  }

  function bubble(role, text) {
    var item = document.createElement('div');
    item.className = 'twin-message twin-' + role;
    item.textContent = text;
    log.appendChild(item);
    log.scrollTop = log.scrollHeight;
    return item;
  }

  window.addEventListener('message', function (event) {
    if (event.source !== window.parent || event.origin !== page) return;
    var data = event.data || {};
    if (data.type === 'twin:session' && typeof data.token === 'string') {
      token = data.token;
      form.hidden = false;
      status.textContent = '';
      input.focus();
    } else if (data.type === 'twin:guide' && typeof data.text === 'string') {
      // Guidance must reach the service with the page's own Origin: embed.js sends it from the page (and
      // the service checks the switch on every message, so the frame does not).
      tell({ type: 'twin:guide-forward', text: data.text });
    }
  });

  function frames(response, onFrame) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = '';
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        var events = buffer.split('\n\n');
        buffer = events.pop();
        events.forEach(function (event) {
          event.split('\n').forEach(function (line) {
            if (line.indexOf('data: ') === 0) onFrame(JSON.parse(line.slice(6)));
          });
        });
        return pump();
      });
    }
    return pump();
  }

  function ask(question) {
    busy = true;
    bubble('user', question);
    transcript('user', question, true);
    var answer = bubble('assistant', '');
    var text = '';
    var requestArgs = conversationId ? { conversationId: conversationId } : {};
    return fetch('/api/ai/personal-stream/qanda-stream', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token },
      body: JSON.stringify({ inputs: [question], requestArgs: requestArgs }),
    })
      .then(function (response) {
        if (!response.ok || !/event-stream/.test(response.headers.get('content-type') || '')) {
          return response.json().then(function (failure) {
            throw new Error(failure.message || 'The question could not be asked');
          });
        }
        return frames(response, function (frame) {
          if (frame.type === 'stream') {
            text += frame.delta;
            answer.textContent = text;
            transcript('assistant', text, false);
          } else if (frame.type === 'complete') {
            if (frame.conversationId) conversationId = frame.conversationId;
            text = String(frame.outputs && frame.outputs[0] != null ? frame.outputs[0] : text);
            answer.textContent = text;
            transcript('assistant', text, true);
          } else if (frame.type === 'error') {
            answer.textContent = frame.error.message;
          }
        });
      })
      .catch(function (error) {
        answer.textContent = error.message;
        answer.className += ' twin-failed';
      })
      .then(function () {
        busy = false;
      });
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var question = input.value.trim();
    if (!question || !token || busy) return;
    input.value = '';
    ask(question);
  });

  tell({ type: 'twin:ready' });
})();
