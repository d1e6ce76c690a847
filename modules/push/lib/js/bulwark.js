/* Bulwark push client: WebSocket, then Server-Sent Events, then long-poll.
 *
 *   const push = Bulwark.push();                 // connects on first use
 *   push.subscribe("site/chat/+", msg => ..., {snapshot: true});
 *   push.publish("site/chat/lobby", {text: "hi"});
 *   push.on("reset", () => location.reload());   // the default
 *   push.on("subscribed", e => ...);             // e.filter: now receiving
 *
 * The client keeps its id across reconnects and transport changes, and the last
 * position (epoch, offset) of every topic it saw. After a reconnect it subscribes
 * again from those positions; if the server cannot recover what was missed (history
 * gone, server restarted), "reset" fires.
 *
 * The id may show in URLs; the token the hello gives with it never does: it goes
 * back in the X-Push-Token header (long-poll, commands), as a WebSocket
 * subprotocol, or, for an EventSource (which cannot send headers), in a cookie
 * for /push that lives only until the stream has opened. For a logged-on
 * visitor the hello also brings the session's CSRF token, which commands
 * (POST) carry in X-CSRF-Token; long-polls are GETs and need none.
 */
(function (global) {
  "use strict";

  function matches(filter, topic) {
    var f = filter.split("/"), t = topic.split("/");
    for (var i = 0; i < f.length; i++) {
      if (f[i] === "#") return true;
      if (i >= t.length) return false;
      if (f[i] !== "+" && f[i] !== t[i]) return false;
    }
    return f.length === t.length;
  }

  function Push(options) {
    options = options || {};
    this.base = options.base || "";
    this.transports = options.transports || ["websocket", "sse", "poll"];
    this.clientId = null;
    this.token = null;
    this.csrf = null;      // the session's CSRF token, for a logged-on visitor
    this.epoch = null;
    this.subs = {};        // filter -> {callbacks: [], snapshot: bool}
    this.positions = {};   // topic -> {epoch, offset}
    this.handlers = {reset: [], lost: [], state: [], error: [], subscribed: []};
    this.attempt = 0;
    this.transport = null;
    this.closed = false;
    this.queue = [];       // commands waiting for a connection
    this.connect();
  }

  Push.prototype.on = function (event, callback) {
    this.handlers[event].push(callback);
    return this;
  };

  Push.prototype.emit = function (event, data) {
    var list = this.handlers[event] || [];
    if (event === "reset" && list.length === 0) { global.location.reload(); return; }
    for (var i = 0; i < list.length; i++) list[i](data);
  };

  Push.prototype.subscribe = function (filter, callback, opts) {
    var sub = this.subs[filter];
    if (!sub) {
      sub = this.subs[filter] = {callbacks: [], snapshot: !!(opts && opts.snapshot)};
      this.send(this.subscribeCommand(filter, sub));
    }
    sub.callbacks.push(callback);
    return this;
  };

  Push.prototype.unsubscribe = function (filter) {
    delete this.subs[filter];
    this.send({op: "unsubscribe", topic: filter});
  };

  Push.prototype.publish = function (topic, payload) {
    this.send({op: "publish", topic: topic, payload: payload});
  };

  Push.prototype.subscribeCommand = function (filter, sub) {
    var cmd = {op: "subscribe", topic: filter};
    var pos = this.positions[filter];
    if (pos) cmd.since = pos; else if (sub.snapshot) cmd.snapshot = true;
    return cmd;
  };

  Push.prototype.send = function (command) {
    if (!this.transport || !this.clientId) { this.queue.push(command); return; }
    this.transport.send(command);
  };

  Push.prototype.url = function (path) {
    var u = this.base + "/push/" + path;
    return this.clientId ? u + "?client=" + encodeURIComponent(this.clientId) : u;
  };

  Push.prototype.connect = function () {
    if (this.closed) return;
    var kinds = this.transports.filter(function (k) {
      if (k === "websocket") return typeof global.WebSocket === "function";
      if (k === "sse") return typeof global.EventSource === "function";
      return true;
    });
    // After repeated failures, fall back to the next transport.
    var kind = kinds[Math.min(Math.floor(this.attempt / 3), kinds.length - 1)];
    this.kind = kind;
    this.transport = new TRANSPORTS[kind](this);
    this.emit("state", {transport: kind, state: "connecting"});
  };

  Push.prototype.reconnect = function () {
    if (this.closed) return;
    this.transport = null;
    this.attempt++;
    var delay = Math.min(15000, 250 * Math.pow(2, Math.min(this.attempt, 6)));
    delay = delay / 2 + Math.random() * delay / 2;
    var self = this;
    setTimeout(function () { self.connect(); }, delay);
  };

  // The first message of every transport: a new id means a new client task on the
  // server, which needs every subscription again (from the known positions).
  Push.prototype.hello = function (msg) {
    var fresh = msg.client !== this.clientId;
    if (this.epoch !== null && msg.epoch !== this.epoch) {
      this.epoch = msg.epoch;
      this.emit("reset", {reason: "server restarted"});
    }
    this.epoch = msg.epoch;
    this.clientId = msg.client;
    this.token = msg.token;
    this.csrf = msg.csrf_token || null;
    this.attempt = 0;
    this.emit("state", {state: "connected", transport: this.kind, client: this.clientId});
    var commands = [];
    if (fresh) for (var f in this.subs) commands.push(this.subscribeCommand(f, this.subs[f]));
    commands = commands.concat(this.queue);
    this.queue = [];
    for (var i = 0; i < commands.length; i++) this.transport.send(commands[i]);
  };

  // Headers that show the client's token (and the session's CSRF token), for fetch.
  Push.prototype.headers = function (extra) {
    var h = extra || {};
    if (this.clientId) h["X-Push-Token"] = this.token;
    if (this.csrf) h["X-CSRF-Token"] = this.csrf;
    return h;
  };

  // The cookie that carries the token to /push/sse (EventSource sends no
  // headers); max-age 0 removes it.
  Push.prototype.tokenCookie = function (maxAge) {
    if (!this.clientId || typeof document === "undefined") return;
    document.cookie = "bulwark-push-" + this.clientId + "=" + (maxAge ? this.token : "") +
      "; path=/push; max-age=" + maxAge + "; samesite=strict" +
      (global.location.protocol === "https:" ? "; secure" : "");
  };

  Push.prototype.receive = function (msg) {
    if (msg.type === "hello") return this.hello(msg);
    if (msg.type === "lost") return this.emit("lost", msg);
    if (msg.type === "error") return this.emit("error", msg);
    if (msg.type === "subscribed") {
      if (msg.recovery === "gap" || msg.recovery === "epoch_changed") this.emit("reset", {reason: msg.recovery, filter: msg.filter});
      if (msg.position && !this.positions[msg.filter]) this.positions[msg.filter] = msg.position;
      this.emit("subscribed", {filter: msg.filter});
      return;
    }
    if (!msg.messages) return;
    for (var i = 0; i < msg.messages.length; i++) {
      var m = msg.messages[i];
      this.positions[m.topic] = {epoch: msg.epoch, offset: m.offset};
      for (var filter in this.subs) {
        if (!matches(filter, m.topic)) continue;
        var cbs = this.subs[filter].callbacks;
        for (var j = 0; j < cbs.length; j++) cbs[j](m.payload, m.topic);
      }
    }
  };

  function WebSocketTransport(push) {
    var loc = global.location, scheme = loc.protocol === "https:" ? "wss://" : "ws://";
    var base = push.base || scheme + loc.host;
    var protocols = ["bulwark-push"];
    if (push.clientId) protocols.push("bulwark-push.token." + push.token);
    var ws = new WebSocket(base.replace(/^http/, "ws") + push.url("ws").slice(push.base.length), protocols);
    var opened = false;
    ws.onopen = function () { opened = true; };
    ws.onmessage = function (e) { push.receive(JSON.parse(e.data)); };
    ws.onclose = function () { if (push.transport && push.transport.ws === ws) push.reconnect(); };
    this.ws = ws;
    this.send = function (cmd) { ws.send(JSON.stringify(cmd)); };
    this.close = function () { ws.close(); };
  }

  function command(push, cmd) {
    return fetch(push.url("command"), {
      method: "POST", headers: push.headers({"Content-Type": "application/json"}), body: JSON.stringify(cmd)
    }).then(function (r) { return r.json(); }).then(function (replies) {
      replies.forEach(function (r) { push.receive(r); });
    }).catch(function (e) { push.emit("error", {message: String(e)}); });
  }

  function SseTransport(push) {
    push.tokenCookie(60);
    var es = new EventSource(push.url("sse"));
    var self = this;
    es.onopen = function () { push.tokenCookie(0); };
    es.addEventListener("hello", function (e) { push.receive(JSON.parse(e.data)); });
    es.addEventListener("lost", function () { push.receive({type: "lost"}); });
    es.onmessage = function (e) { push.receive(JSON.parse(e.data)); };
    es.onerror = function () { es.close(); if (push.transport === self) push.reconnect(); };
    this.send = function (cmd) { command(push, cmd); };
    this.close = function () { es.close(); };
  }

  function PollTransport(push) {
    var self = this, stopped = false;
    // Closing ends the waiting request too: what it would have got stays in the
    // client's inbox for the next transport.
    var abort = typeof AbortController === "function" ? new AbortController() : null;
    function loop() {
      if (stopped || push.transport !== self) return;
      fetch(push.url("poll"), {
        method: "GET", cache: "no-store", headers: push.headers(), signal: abort && abort.signal
      }).then(function (r) {
        if (r.headers.get("x-push-lost")) push.receive({type: "lost"});
        if (r.status === 204) return null;
        if (!r.ok) throw new Error("poll: " + r.status);
        return r.json();
      }).then(function (msg) {
        if (msg) push.receive(msg);
        loop();
      }).catch(function () { if (push.transport === self) push.reconnect(); });
    }
    // Start once the constructor has returned and this is the push's transport.
    setTimeout(loop, 0);
    this.send = function (cmd) { command(push, cmd); };
    this.close = function () { stopped = true; if (abort) abort.abort(); };
  }

  var TRANSPORTS = {websocket: WebSocketTransport, sse: SseTransport, poll: PollTransport};

  Push.prototype.close = function () {
    this.closed = true;
    if (this.transport) this.transport.close();
  };

  var shared = null;
  global.Bulwark = global.Bulwark || {};
  global.Bulwark.matches = matches;
  global.Bulwark.Push = Push;
  global.Bulwark.push = function (options) {
    if (options) return new Push(options);
    return shared || (shared = new Push());
  };
})(window);
