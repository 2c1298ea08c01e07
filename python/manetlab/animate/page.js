// manetlab animation page: draws one run from the JSON embedded in #manetlab-data.
// No network, no libraries: canvas 2D only. window.manetlab exposes the state to tests.
// Every string in the data comes from a result folder, which may come from anyone:
// it enters the page only as text (`el`, textContent, canvas fillText), never as
// HTML; the page's CSP also makes innerHTML throw (Trusted Types) and runs no other script.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("manetlab-data").textContent);
  const N = D.nodes, T0 = D.from_s, T1 = D.to_s;
  const FLOW_CTRL = -1, FLOW_MAC = -2;
  const KIND = D.tx_kinds; // DATA RTS CTS ACK CTRL

  // --- data in typed arrays -------------------------------------------------------
  const traj = D.traj.map(function (a) {
    const m = a.length / 3, t = new Float64Array(m), x = new Float64Array(m), y = new Float64Array(m);
    for (let i = 0; i < m; i++) { t[i] = a[3 * i]; x[i] = a[3 * i + 1]; y[i] = a[3 * i + 2]; }
    return { t: t, x: x, y: y };
  });
  const nTx = D.tx.dt_us.length;
  const txT = new Float64Array(nTx), txA = Int32Array.from(D.tx.a), txB = Int32Array.from(D.tx.b);
  const txK = Int8Array.from(D.tx.k), txF = Int32Array.from(D.tx.f);
  { let acc = 0; for (let i = 0; i < nTx; i++) { acc += D.tx.dt_us[i]; txT[i] = acc / 1e6; } }
  const DR = D.drops, drops = [], dropT = new Float64Array(DR.dt_us.length);
  { let acc = 0;
    for (let i = 0; i < DR.dt_us.length; i++) {
      acc += DR.dt_us[i]; dropT[i] = acc / 1e6;
      drops.push({ t: dropT[i], node: DR.node[i], reason: DR.reasons[DR.reason[i]], level: DR.levels[DR.level[i]], flow: DR.flow[i], ptype: DR.ptypes[DR.ptype[i]] });
    } }
  const rev = D.route_events.map(function (e) { return { t: e[0], node: e[1], kind: e[2], peer: e[3] }; });
  const revT = Float64Array.from(rev.map(function (e) { return e.t; }));
  const faults = D.faults.map(function (f) { return { t: f[0], kind: f[1], nodes: f[2] }; });
  const queues = {};
  D.queues.forEach(function (q) { queues[q.node] = q; });
  const routesByNode = [];
  for (let i = 0; i < N; i++) routesByNode.push([]);
  D.routes.forEach(function (r) { routesByNode[r[1]].push({ t: r[0], dst: r[2], nh: r[3] }); });
  const breaksByNode = [];
  for (let i = 0; i < N; i++) breaksByNode.push([]);
  rev.forEach(function (e) { if (e.kind === "break") breaksByNode[e.node].push(e); });

  // Flow colours: a qualitative palette without pure red (red marks drops and breaks);
  // routing control neutral grey; MAC frames not tied to a flow light grey.
  const PALETTE = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#e377c2", "#8c564b", "#bcbd22", "#393b79", "#637939", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363"];
  function flowColor(f) { return f === FLOW_CTRL ? "#777777" : f === FLOW_MAC ? "#b0b0b0" : PALETTE[f % PALETTE.length]; }

  // Largest i with a[i] <= v (or -1).
  function upper(a, v) { let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] <= v) lo = m + 1; else hi = m; } return lo - 1; }

  function pos(i, t) {
    const tr = traj[i], k = upper(tr.t, t);
    if (k < 0) return [tr.x[0], tr.y[0]];
    if (k >= tr.t.length - 1) return [tr.x[tr.t.length - 1], tr.y[tr.t.length - 1]];
    const f = (t - tr.t[k]) / (tr.t[k + 1] - tr.t[k]);
    return [tr.x[k] + (tr.x[k + 1] - tr.x[k]) * f, tr.y[k] + (tr.y[k + 1] - tr.y[k]) * f];
  }

  // Node on/off and failed links at t, from the fault log.
  function faultState(t) {
    const off = new Set(), down = new Set();
    for (const f of faults) {
      if (f.t > t) break;
      if (f.kind === "node_off") off.add(f.nodes[0]);
      else if (f.kind === "node_on") off.delete(f.nodes[0]);
      else if (f.kind === "link_down") down.add(Math.min(f.nodes[0], f.nodes[1]) + "-" + Math.max(f.nodes[0], f.nodes[1]));
      else if (f.kind === "link_up") down.delete(Math.min(f.nodes[0], f.nodes[1]) + "-" + Math.max(f.nodes[0], f.nodes[1]));
    }
    return { off: off, down: down };
  }

  // --- UI state ------------------------------------------------------------------------
  const S = { t: T0, playing: false, speed: 1, selected: -1, showRange: false, showCs: false, showCol: false, frames: 0,
              flowOn: new Set([FLOW_CTRL, FLOW_MAC].concat(D.flows.map(function (f) { return f.id; }))), drawn: null };
  const $ = function (id) { return document.getElementById(id); };
  // A new element of class `cls` (or none) holding `kids`: elements, or anything else as text.
  function el(tag, cls) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    for (let i = 2; i < arguments.length; i++) {
      const k = arguments[i];
      if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
    }
    return e;
  }
  function swatch(f) { const s = el("span", "sw"); s.style.background = flowColor(f); return s; }
  const canvas = $("map"), ctx = canvas.getContext("2d");
  let W = 0, H = 0, scale = 1, pad = 24, ox = pad;

  function resize() {
    const wrapW = $("mapwrap").clientWidth;
    const aw = D.area[0], ah = D.area[1];
    W = wrapW; scale = (W - 2 * pad) / aw;
    H = Math.min(Math.round(ah * scale + 2 * pad), Math.round(window.innerHeight * 0.62));
    scale = Math.min(scale, (H - 2 * pad) / ah);
    ox = Math.max(pad, (W - aw * scale) / 2); // centred when the height limits the scale
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    canvas.style.height = H + "px";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  // ns-2 coordinates: y grows upwards.
  function px(p) { return [ox + p[0] * scale, H - pad - p[1] * scale]; }

  // --- drawing ----------------------------------------------------------------------------
  const FLASH_WALL_S = 0.12, MARK_WALL_S = 1.5, MAX_FLASHES = 4000;
  function flashWindow() { return Math.min(0.5, Math.max(0.004, FLASH_WALL_S * S.speed)); }
  function markWindow() { return Math.min(5, Math.max(0.5, MARK_WALL_S * S.speed)); }

  function visibleDrops(t) {
    const out = [], w = markWindow();
    for (let i = upper(dropT, t); i >= 0 && dropT[i] >= t - w; i--) {
      const d = drops[i];
      if (!S.flowOn.has(d.flow)) continue;
      if (d.reason === "COL" && !S.showCol) continue;
      out.push(d);
    }
    return out;
  }

  function draw() {
    const t = S.t, P = [], fs = faultState(t);
    for (let i = 0; i < N; i++) P.push(pos(i, t));
    const Q = P.map(px);
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    ctx.strokeStyle = "#ccc"; ctx.lineWidth = 1;
    ctx.strokeRect(ox, H - pad - D.area[1] * scale, D.area[0] * scale, D.area[1] * scale);
    // Ranges on demand (all nodes, or the selected node only).
    const ringNodes = S.selected >= 0 ? [S.selected] : [...Array(N).keys()];
    for (const [on, r, col] of [[S.showCs, D.cs_range_m, "rgba(255,140,0,0.25)"], [S.showRange, D.range_m, "rgba(31,119,180,0.35)"]]) {
      if (!on || !r) continue;
      ctx.strokeStyle = col; ctx.lineWidth = 1;
      for (const i of ringNodes) { if (fs.off.has(i)) continue; ctx.beginPath(); ctx.arc(Q[i][0], Q[i][1], r * scale, 0, 2 * Math.PI); ctx.stroke(); }
    }
    // Failed links.
    ctx.setLineDash([2, 3]); ctx.strokeStyle = "#c00"; ctx.lineWidth = 2;
    for (const key of fs.down) {
      const ab = key.split("-").map(Number);
      ctx.beginPath(); ctx.moveTo(Q[ab[0]][0], Q[ab[0]][1]); ctx.lineTo(Q[ab[1]][0], Q[ab[1]][1]); ctx.stroke();
    }
    ctx.setLineDash([]);
    // Transmissions: one flash per frame, fading; colour = flow, style = frame kind.
    const fw = flashWindow();
    let drawnTx = 0;
    const last = upper(txT, t);
    for (let i = last; i >= 0 && txT[i] >= t - fw && drawnTx < MAX_FLASHES; i--) {
      const f = txF[i];
      if (!S.flowOn.has(f)) continue;
      const a = txA[i], b = txB[i], k = txK[i];
      const age = (t - txT[i]) / fw;
      ctx.globalAlpha = Math.max(0.08, 1 - age);
      ctx.strokeStyle = flowColor(f);
      if (b < 0 || b >= N) {
        // Broadcast: a ring of the reception range.
        ctx.lineWidth = 1; ctx.setLineDash([]);
        ctx.beginPath(); ctx.arc(Q[a][0], Q[a][1], 9 + 10 * age, 0, 2 * Math.PI); ctx.stroke();
      } else {
        ctx.lineWidth = k === 0 ? 3 : k === 4 ? 1.5 : 1.5;
        ctx.setLineDash(k === 1 ? [6, 3] : k === 2 ? [2, 3] : k === 3 ? [1, 2] : []);
        ctx.beginPath(); ctx.moveTo(Q[a][0], Q[a][1]); ctx.lineTo(Q[b][0], Q[b][1]); ctx.stroke();
        // Arrow head at the receiver.
        const dx = Q[b][0] - Q[a][0], dy = Q[b][1] - Q[a][1], L = Math.hypot(dx, dy) || 1;
        const ux = dx / L, uy = dy / L, hx = Q[b][0] - ux * 7, hy = Q[b][1] - uy * 7;
        ctx.setLineDash([]); ctx.beginPath();
        ctx.moveTo(hx - uy * 3 - ux * 5, hy + ux * 3 - uy * 5); ctx.lineTo(hx, hy); ctx.lineTo(hx + uy * 3 - ux * 5, hy - ux * 3 - uy * 5); ctx.stroke();
      }
      drawnTx++;
    }
    ctx.globalAlpha = 1; ctx.setLineDash([]);
    // Routing events: discoveries (RREQ) as rings, RERR as small rings, breaks as a red cut line.
    const mw = markWindow();
    const routeShown = [];
    for (let i = upper(revT, t); i >= 0 && revT[i] >= t - mw; i--) {
      const e = rev[i], age = (t - e.t) / mw, q = Q[e.node];
      if (!S.flowOn.has(FLOW_CTRL) && e.kind !== "break") continue;
      ctx.globalAlpha = Math.max(0.15, 1 - age);
      if (e.kind === "RREQ") {
        ctx.strokeStyle = "#555"; ctx.lineWidth = 1.5; ctx.beginPath(); ctx.arc(q[0], q[1], 10 + 30 * age, 0, 2 * Math.PI); ctx.stroke();
      } else if (e.kind === "RERR") {
        ctx.strokeStyle = "#b8860b"; ctx.lineWidth = 2; ctx.beginPath(); ctx.arc(q[0], q[1], 11, 0, 2 * Math.PI); ctx.stroke();
      } else if (e.kind === "break") {
        ctx.strokeStyle = "#c00"; ctx.lineWidth = 2; ctx.setLineDash([4, 3]);
        if (e.peer >= 0 && e.peer < N) { ctx.beginPath(); ctx.moveTo(q[0], q[1]); ctx.lineTo(Q[e.peer][0], Q[e.peer][1]); ctx.stroke(); }
        ctx.setLineDash([]); ctx.fillStyle = "#c00"; ctx.font = "bold 11px sans-serif"; ctx.fillText("break", q[0] + 9, q[1] + 4);
      }
      routeShown.push(e);
    }
    ctx.globalAlpha = 1;
    // Nodes.
    for (let i = 0; i < N; i++) {
      const q = Q[i], off = fs.off.has(i);
      ctx.beginPath(); ctx.arc(q[0], q[1], 6, 0, 2 * Math.PI);
      ctx.fillStyle = off ? "#fff" : i === S.selected ? "#ffd54f" : "#333"; ctx.fill();
      ctx.strokeStyle = off ? "#999" : "#000"; ctx.lineWidth = i === S.selected ? 2.5 : 1; ctx.stroke();
      if (off) { ctx.strokeStyle = "#999"; ctx.beginPath(); ctx.moveTo(q[0] - 5, q[1] - 5); ctx.lineTo(q[0] + 5, q[1] + 5); ctx.stroke(); }
      ctx.fillStyle = off ? "#999" : "#000"; ctx.font = "11px sans-serif"; ctx.fillText(String(i), q[0] + 8, q[1] - 6);
    }
    // Drops: a cross at the node with the ns-2 reason code.
    // One cross per node; one label per node and code (the newest first), stacked.
    const vd = visibleDrops(t), seen = new Set(), labels = {};
    ctx.font = "bold 11px sans-serif";
    for (const d of vd) {
      const q = Q[d.node], k = d.node + "/" + d.reason;
      if (seen.has(k)) continue;
      seen.add(k);
      const row = labels[d.node] = (labels[d.node] || 0) + 1;
      if (row > 4) continue;
      ctx.strokeStyle = d.reason === "COL" ? "#999" : "#c00"; ctx.lineWidth = 2;
      if (row === 1) { ctx.beginPath(); ctx.moveTo(q[0] - 5, q[1] + 9); ctx.lineTo(q[0] + 5, q[1] + 19); ctx.moveTo(q[0] + 5, q[1] + 9); ctx.lineTo(q[0] - 5, q[1] + 19); ctx.stroke(); }
      ctx.fillStyle = d.reason === "COL" ? "#777" : "#c00"; ctx.textAlign = "right"; ctx.fillText(d.reason, q[0] - 7, q[1] + 18 + 11 * (row - 1)); ctx.textAlign = "left";
    }
    S.drawn = { tx: drawnTx, drops: vd, route: routeShown, positions: P, off: [...fs.off], down: [...fs.down] };
    S.frames++;
    $("time").textContent = "t = " + t.toFixed(3) + " s";
    const sc = $("scrub");
    if (document.activeElement !== sc) sc.value = String((t - T0) / (T1 - T0) * 10000);
    drawCharts(t);
    if (S.selected >= 0) panel(S.selected, t, P, fs);
  }

  // --- per-flow charts: cumulative packets received; cwnd when recorded -----------------------
  const charts = [];
  function setupCharts() {
    const box = $("charts");
    for (const f of D.flows) {
      const div = document.createElement("div"); div.className = "chart";
      const title = el("div", "t", swatch(f.id), "flow " + f.id + " " + f.name + " (" + f.kind + (f.transport ? " " + f.transport : "") + ", " + f.src + "→" + f.dst + ")");
      const c = document.createElement("canvas"); c.width = 260; c.height = 80; c.style.width = "260px"; c.style.height = "80px";
      div.appendChild(title); div.appendChild(c); box.appendChild(div);
      charts.push({ f: f, c: c, title: title, rxT: Float64Array.from(f.rx_t), cwT: Float64Array.from(f.cwnd_t), maxRx: Math.max(1, f.rx_n.length ? f.rx_n[f.rx_n.length - 1] : 0), maxCw: Math.max(1, ...f.cwnd.slice(0, 20000)) });
      div.style.display = S.flowOn.has(f.id) ? "" : "none";
      charts[charts.length - 1].div = div;
    }
  }
  function drawCharts(t) {
    for (const ch of charts) {
      if (ch.div.style.display === "none") continue;
      const g = ch.c.getContext("2d"), w = ch.c.width, h = ch.c.height, f = ch.f;
      const X = function (tt) { return 30 + (tt - T0) / (T1 - T0) * (w - 36); };
      g.clearRect(0, 0, w, h);
      g.strokeStyle = "#ddd"; g.strokeRect(30, 4, w - 36, h - 16);
      // cwnd (segments), grey step line, right-hand scale.
      if (f.cwnd.length) {
        g.strokeStyle = "#aaa"; g.lineWidth = 1; g.beginPath();
        for (let i = 0; i < f.cwnd.length; i++) {
          const yy = h - 12 - f.cwnd[i] / ch.maxCw * (h - 18);
          if (i === 0) g.moveTo(X(Math.max(T0, f.cwnd_t[0])), yy); else { g.lineTo(X(f.cwnd_t[i]), h - 12 - f.cwnd[i - 1] / ch.maxCw * (h - 18)); g.lineTo(X(f.cwnd_t[i]), yy); }
        }
        g.lineTo(X(T1), h - 12 - f.cwnd[f.cwnd.length - 1] / ch.maxCw * (h - 18)); g.stroke();
      }
      // Cumulative received, in the flow's colour, drawn up to t.
      g.strokeStyle = flowColor(f.id); g.lineWidth = 1.5; g.beginPath(); g.moveTo(X(T0), h - 12);
      const k = upper(ch.rxT, t);
      for (let i = 0; i <= k; i++) g.lineTo(X(f.rx_t[i]), h - 12 - f.rx_n[i] / ch.maxRx * (h - 18));
      g.lineTo(X(t), h - 12 - (k >= 0 ? f.rx_n[k] : 0) / ch.maxRx * (h - 18)); g.stroke();
      g.strokeStyle = "#000"; g.beginPath(); g.moveTo(X(t), 4); g.lineTo(X(t), h - 12); g.stroke();
      g.fillStyle = "#444"; g.font = "10px sans-serif";
      g.fillText(String(ch.maxRx), 2, 12); g.fillText("0", 20, h - 12);
      const rxNow = k >= 0 ? f.rx_n[k] : 0;
      let label = "rx " + rxNow;
      if (f.cwnd.length) { const j = upper(ch.cwT, t); label += "  cwnd " + (j >= 0 ? f.cwnd[j].toFixed(1) : "–") + " (max " + ch.maxCw.toFixed(0) + ")"; }
      g.fillText(label, 34, h - 1);
    }
  }

  // --- node panel: queue, neighbours, routes ---------------------------------------------
  function queueAt(i, t) {
    const q = queues[i];
    if (!q) return null;
    const k = upper(q.t, t);
    return k >= 0 ? q.len[k] : 0;
  }
  function neighbours(i, t, P, fs) {
    const out = [];
    if (fs.off.has(i)) return out;
    // Wired links (failed ones left out), then the radio neighbours.
    for (const [a, b] of D.links) {
      const j = a === i ? b : b === i ? a : -1;
      if (j >= 0 && !fs.off.has(j) && !fs.down.has(Math.min(i, j) + "-" + Math.max(i, j))) out.push([j, Math.hypot(P[i][0] - P[j][0], P[i][1] - P[j][1])]);
    }
    if (!D.range_m) return out;
    for (let j = 0; j < N; j++) {
      if (j === i || fs.off.has(j)) continue;
      const d = Math.hypot(P[i][0] - P[j][0], P[i][1] - P[j][1]);
      if (d <= D.range_m && !fs.down.has(Math.min(i, j) + "-" + Math.max(i, j))) out.push([j, d]);
    }
    return out;
  }
  function routesAt(i, t) {
    const cur = new Map();
    for (const r of routesByNode[i]) { if (r.t > t) break; cur.set(r.dst, r); }
    const out = [];
    for (const [dst, r] of [...cur.entries()].sort(function (a, b) { return a[0] - b[0]; })) {
      let broken = null;
      for (const b of breaksByNode[i]) { if (b.t > t) break; if (b.peer === r.nh && b.t >= r.t) broken = b.t; }
      out.push({ dst: dst, nh: r.nh, since: r.t, broken: broken });
    }
    return out;
  }
  function panel(i, t, P, fs) {
    const q = queueAt(i, t), nb = neighbours(i, t, P, fs), rt = routesAt(i, t);
    const side = [
      el("h2", null, "node " + i + (fs.off.has(i) ? " (switched off)" : "")),
      el("div", null, "position (" + P[i][0].toFixed(1) + ", " + P[i][1].toFixed(1) + ") m"),
      el("div", null, "interface queue: ", q === null ? el("span", "muted", "not recorded (outputs.series = true; wireless interfaces only)") : q + (q === 1 ? " packet" : " packets")),
      el("h2", null, "neighbours" + (D.range_m ? " (≤ " + D.range_m.toFixed(0) + " m)" : " (links)")),
    ];
    const nbBox = el("div");
    nb.forEach(function (x, k) { nbBox.append(k ? ", " : "", x[0] + " ", el("span", "muted", "(" + x[1].toFixed(0) + " m)")); });
    if (!nb.length) nbBox.append(el("span", "muted", "none"));
    side.push(nbBox, el("h2", null, "routes in use"),
      el("div", "muted", "next hop of the last packet this node sent or forwarded to each destination (trace, RTR level)"));
    if (rt.length) {
      const tbl = el("table", null, el("tr", null, el("th", null, "dst"), el("th", null, "via"), el("th", null, "since"), el("th")));
      for (const r of rt) tbl.append(el("tr", null, el("td", null, r.dst), el("td", null, r.nh), el("td", null, r.since.toFixed(3)), el("td", null, r.broken !== null ? el("span", "bad", "broken " + r.broken.toFixed(3)) : "")));
      side.push(tbl);
    } else side.push(el("div", "muted", "none yet"));
    const recent = [];
    for (let k = upper(dropT, t); k >= 0 && recent.length < 8; k--) if (drops[k].node === i && (drops[k].reason !== "COL" || S.showCol)) recent.push(drops[k]);
    side.push(el("h2", null, "last drops here"));
    for (const d of recent) side.push(el("div", null, d.t.toFixed(3) + " " + d.level + " " + d.reason + " " + d.ptype + (d.flow >= 0 ? " (flow " + d.flow + ")" : "")));
    if (!recent.length) side.push(el("span", "muted", "none"));
    $("side").replaceChildren(...side);
    S.panel = { node: i, queue: q, neighbours: nb.map(function (x) { return x[0]; }), routes: rt };
  }

  // --- time control -------------------------------------------------------------------------
  let lastWall = null;
  function setT(t) { S.t = Math.min(T1, Math.max(T0, t)); draw(); }
  function tick(now) {
    if (S.playing) {
      if (lastWall !== null) {
        const dt = Math.min(0.1, (now - lastWall) / 1000) * S.speed;
        S.t = Math.min(T1, S.t + dt);
        if (S.t >= T1) { S.playing = false; $("play").textContent = "▶ play"; }
      }
      lastWall = now;
      draw();
    } else lastWall = null;
    requestAnimationFrame(tick);
  }
  function play() { if (S.t >= T1) S.t = T0; S.playing = true; $("play").textContent = "❚❚ pause"; }
  function pause() { S.playing = false; $("play").textContent = "▶ play"; }
  // The first event after t of the chosen kind (respecting the flow filter).
  function nextEvent(kind) {
    const t = S.t + 1e-7;
    let best = Infinity;
    if (kind === "any" || kind === "drop") {
      for (let i = upper(dropT, t) + 1; i < drops.length; i++) { const d = drops[i]; if (S.flowOn.has(d.flow) && (d.reason !== "COL" || S.showCol)) { best = Math.min(best, d.t); break; } }
    }
    if (kind === "any" || kind === "route") {
      for (let i = upper(revT, t) + 1; i < rev.length; i++) { if (rev[i].kind === "break" || S.flowOn.has(FLOW_CTRL)) { best = Math.min(best, rev[i].t); break; } }
    }
    if (kind === "any" || kind === "fault") { for (const f of faults) if (f.t > t) { best = Math.min(best, f.t); break; } }
    if (kind === "any" || kind === "tx") {
      for (let i = upper(txT, t) + 1; i < nTx; i++) if (S.flowOn.has(txF[i])) { best = Math.min(best, txT[i]); break; }
    }
    if (best < Infinity) { pause(); setT(best); }
    return best < Infinity ? best : null;
  }

  function setupControls() {
    $("play").addEventListener("click", function () { S.playing ? pause() : play(); });
    const sp = $("speed");
    const speeds = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100];
    sp.min = "0"; sp.max = String(speeds.length - 1); sp.step = "1"; sp.value = "3";
    const setSp = function () { S.speed = speeds[Number(sp.value)]; $("speedv").textContent = S.speed + "×"; if (!S.playing) draw(); };
    sp.addEventListener("input", setSp); setSp();
    $("scrub").addEventListener("input", function () { setT(T0 + Number($("scrub").value) / 10000 * (T1 - T0)); });
    $("next").addEventListener("click", function () { nextEvent($("nextkind").value); });
    $("rng").addEventListener("change", function () { S.showRange = this.checked; draw(); });
    $("cs").addEventListener("change", function () { S.showCs = this.checked; draw(); });
    $("col").addEventListener("change", function () { S.showCol = this.checked; draw(); });
    const fbox = $("flows");
    const entries = [[FLOW_CTRL, "routing control"], [FLOW_MAC, "MAC frames without a flow"]].concat(D.flows.map(function (f) { return [f.id, "flow " + f.id + " " + f.name]; }));
    for (const [id, name] of entries) {
      const box = el("input");
      box.type = "checkbox"; box.checked = true; box.dataset.flow = String(id);
      box.addEventListener("change", function () {
        if (this.checked) S.flowOn.add(id); else S.flowOn.delete(id);
        for (const ch of charts) ch.div.style.display = S.flowOn.has(ch.f.id) ? "" : "none";
        draw();
      });
      fbox.appendChild(el("label", null, box, swatch(id), name));
    }
    canvas.addEventListener("click", function (ev) {
      const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      let best = -1, bd = 15;
      for (let i = 0; i < N; i++) { const q = px(pos(i, S.t)), d = Math.hypot(q[0] - x, q[1] - y); if (d < bd) { bd = d; best = i; } }
      selectNode(best);
    });
    window.addEventListener("resize", function () { resize(); draw(); });
    document.addEventListener("keydown", function (ev) {
      if (ev.target.tagName === "INPUT" && ev.target.type !== "checkbox" && ev.target.type !== "range") return;
      if (ev.key === " ") { ev.preventDefault(); S.playing ? pause() : play(); }
      else if (ev.key === "n") nextEvent($("nextkind").value);
    });
  }
  function selectNode(i) {
    S.selected = i;
    if (i < 0) { $("side").replaceChildren(el("div", "muted", "Click a node for its queue, neighbours and routes.")); S.panel = null; }
    draw();
  }

  const t0 = performance.now();
  resize(); setupCharts(); setupControls(); selectNode(-1);
  requestAnimationFrame(tick);
  const openMs = performance.now() - t0;

  // For tests and the curious: the page's state.
  window.manetlab = {
    data: D,
    ready: true,
    openMs: openMs,
    state: function () {
      return { t: S.t, playing: S.playing, speed: S.speed, frames: S.frames, selected: S.selected, positions: S.drawn.positions,
               drops: S.drawn.drops.map(function (d) { return { t: d.t, node: d.node, reason: d.reason, flow: d.flow, level: d.level }; }),
               route: S.drawn.route, transmissionsDrawn: S.drawn.tx, off: S.drawn.off, down: S.drawn.down, panel: S.panel || null,
               flowsOn: [...S.flowOn] };
    },
    seek: setT, play: play, pause: pause, next: nextEvent, selectNode: selectNode,
    setSpeed: function (x) { S.speed = x; $("speedv").textContent = x + "×"; },
    position: pos,
    // Canvas (CSS pixel) coordinates of node i now, from the canvas's top-left corner.
    pixel: function (i) { return px(pos(i, S.t)); },
  };
})();
