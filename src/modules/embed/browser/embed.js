// embed.js: a page includes it with its twin's public id to embed that twin:
//   <script src="https://twin.example/embed.js" data-public-id="…" async></script>
// It adds a launcher button and a frame of /embed/{publicId}, opens the session from the page itself (so
// the Origin the service checks is the one the browser sets for this page), hands the frame its token by
// postMessage to the service's origin only, and accepts messages from that frame only. Page API:
// window.DigitalTwin.open(), close(), onTranscript(fn), guide(text), signIn(launchToken).
// Options: data-launch-token (sign the person in instead of a visitor), data-visitor="false" (no
// visitor session until signIn), data-open="true" (start open). No framework, no dependencies.
(function () {
  'use strict';
  var script = document.currentScript;
  if (!script) return;
  var publicId = script.getAttribute('data-public-id') || '';
  var service = new URL(script.src, location.href).origin;
  var listeners = [];
  var token = null;
  var ready = false;
  var pendingSession = null;
  var panel, frame, launcher, notice;

  function api(path, body, bearer) {
    var headers = { 'content-type': 'application/json' };
    if (bearer) headers.authorization = 'Bearer ' + bearer;
    return fetch(service + path, { method: 'POST', headers: headers, body: JSON.stringify(body), credentials: 'omit' }).then(function (response) {
      return response.json().then(function (json) {
        if (!response.ok) {
          var error = new Error(json.message || 'Request failed');
          error.status = response.status;
          error.code = json.code;
          throw error;
        }
        return json;
      });
    });
  }

  function show(message) {
    notice.textContent = message;
    notice.style.display = 'block';
    frame.style.display = 'none';
  }

  function sendSession() {
    if (!ready || !pendingSession) return;
    frame.contentWindow.postMessage({ type: 'twin:session', token: pendingSession.token, visitor: pendingSession.visitor }, service);
    pendingSession = null;
  }

  function openSession(launchToken) {
    var body = { publicId: publicId };
    if (launchToken) body.launchToken = launchToken;
    return api('/api/agent/embed/session', body).then(
      function (session) {
        token = session.token;
        pendingSession = session;
        sendSession();
        return { visitor: session.visitor };
      },
      function (error) {
        show(error.status === 404 ? 'This Digital Twin is not available.' : error.status === 403 ? 'This page may not embed this Digital Twin.' : error.message);
        throw error;
      },
    );
  }

  function build() {
    var style = 'position:fixed;right:20px;z-index:2147483000;';
    launcher = document.createElement('button');
    launcher.type = 'button';
    launcher.textContent = 'Chat';
    launcher.setAttribute('aria-expanded', 'false');
    launcher.setAttribute('data-twin-launcher', '');
    launcher.style.cssText = style + 'bottom:20px;padding:12px 18px;border:0;border-radius:24px;background:#1f4fd1;color:#fff;font:600 15px system-ui,sans-serif;cursor:pointer;box-shadow:0 2px 8px rgba(0,0,0,.25)';
    launcher.addEventListener('click', function () {
      panel.style.display === 'none' ? open() : close();
    });
    panel = document.createElement('div');
    panel.setAttribute('data-twin-panel', '');
    panel.style.cssText = style + 'bottom:76px;width:min(380px,calc(100vw - 40px));height:min(560px,calc(100vh - 110px));display:none;background:#fff;border-radius:12px;overflow:hidden;box-shadow:0 8px 28px rgba(0,0,0,.3)';
    notice = document.createElement('p');
    notice.setAttribute('role', 'status');
    notice.style.cssText = 'display:none;margin:16px;font:15px system-ui,sans-serif;color:#333';
    frame = document.createElement('iframe');
    frame.title = 'Digital Twin chat';
    frame.src = service + '/embed/' + encodeURIComponent(publicId);
    frame.style.cssText = 'width:100%;height:100%;border:0';
    panel.appendChild(notice);
    panel.appendChild(frame);
    document.body.appendChild(panel);
    document.body.appendChild(launcher);
  }

  function open() {
    panel.style.display = 'block';
    launcher.setAttribute('aria-expanded', 'true');
  }

  function close() {
    panel.style.display = 'none';
    launcher.setAttribute('aria-expanded', 'false');
  }

  function guide(text) {
    if (!token) return Promise.reject(new Error('No session yet'));
    return api('/api/agent/embed/guide', { text: String(text) }, token);
  }

  window.addEventListener('message', function (event) {
    // Only the frame this script made, on the service's origin.
    if (!frame || event.source !== frame.contentWindow || event.origin !== service) return;
    var data = event.data || {};
    if (data.type === 'twin:ready') {
      ready = true;
      sendSession();
    } else if (data.type === 'twin:transcript') {
      var line = { type: 'twin:transcript', role: data.role, text: data.text, final: data.final };
      listeners.forEach(function (fn) {
        try {
          fn(line);
        } catch (error) {
          setTimeout(function () { throw error; });
        }
      });
    } else if (data.type === 'twin:guide-forward') {
      // A page's own `twin:guide` message into the frame comes back here, to be sent with this page's Origin.
      guide(data.text).catch(function () {});
    }
  });

  function start() {
    build();
    if (script.getAttribute('data-open') === 'true') open();
    var launchToken = script.getAttribute('data-launch-token');
    if (launchToken) openSession(launchToken).catch(function () {});
    else if (script.getAttribute('data-visitor') !== 'false') openSession(null).catch(function () {});
  }

  window.DigitalTwin = {
    open: open,
    close: close,
    onTranscript: function (fn) {
      if (typeof fn === 'function') listeners.push(fn);
    },
    guide: guide,
    signIn: function (launchToken) {
      return openSession(launchToken);
    },
  };
  if (document.body) start();
  else document.addEventListener('DOMContentLoaded', start);
})();
