// A warband bot in plain JavaScript, played through `warband gateway` (PROTOCOL.md, section 15).
//
// It is a real participant of the run: it registers with its agent id and token, gets the
// world's Percept and the clock's Tick as JSON, and acts by sending the world Act messages,
// which the world checks and answers with ActResult like any bot's. Its behaviour is simple on
// purpose: it follows its squad's orders (goto, capture, defend... by the world's move act along
// the map's links), shoots the nearest enemy it sees, reloads an empty weapon, respawns when
// dead, answers every order with a CompletionReport and reports its status to its superior.
// clients/godot/bot.gd is the same bot in GDScript.

"use strict";

class WarbandBot {
  constructor({ url, agent, token, map, log }) {
    this.url = url;
    this.agent = agent;
    this.token = token;
    this.map = map; // {waypoints: [{id, x, y}], links: [[a, b]]}
    this.log = log || (() => {});
    this.links = new Map();
    for (const w of map.waypoints) this.links.set(w.id, []);
    for (const [a, b] of map.links) {
      this.links.get(a).push(b);
      this.links.get(b).push(a);
    }
    this.facts = [];
    this.orders = []; // the command queue: the current order first
    this.superior = null;
    this.stats = { ticks: 0, acts: 0, accepted: 0, refused: 0, orders: 0, completed: 0, reasons: {} };
    this.closed = null;
  }

  // --- the connection ---------------------------------------------------------------------------

  start() {
    return new Promise((resolve) => {
      this.ws = new WebSocket(this.url);
      this.ws.onopen = () => this.send({ type: "_Register", sender: this.agent, groups: ["ticks"], token: this.token });
      this.ws.onmessage = (event) => this.receive(JSON.parse(event.data));
      this.ws.onclose = (event) => {
        this.closed = { code: event.code, reason: event.reason };
        resolve(this.closed);
      };
    });
  }

  send(message) {
    this.ws.send(JSON.stringify(message));
  }

  receive(message) {
    switch (message.type) {
      case "Percept": this.facts = message.facts; break;
      case "Tick": this.onTick(message.tick); this.send({ type: "TickDone" }); break;
      case "Order": this.onOrder(message); break;
      case "WithdrawOrder": this.orders = this.orders.filter((o) => o.id !== message.order_id); break;
      case "ActResult":
        if (message.accepted) this.stats.accepted += 1;
        else {
          this.stats.refused += 1;
          this.stats.reasons[message.reason] = (this.stats.reasons[message.reason] || 0) + 1;
        }
        break;
      case "_Undeliverable": this.log(`undeliverable: ${message.reason}`); break;
      default: break;
    }
  }

  // --- what it knows ----------------------------------------------------------------------------

  all(name) { return this.facts.filter((f) => f[0] === name).map((f) => f.slice(1)); }
  first(name) { const found = this.all(name); return found.length ? found[0] : null; }
  get team() { const self = this.first("self"); return self ? self[1] : null; }
  get life() { const state = this.first("state"); return state ? state[0] : "alive"; }
  get here() { const at = this.all("at").find((f) => f[0] === this.agent); return at ? at[1] : null; }
  get walkingTo() { const m = this.all("moving").find((f) => f[0] === this.agent); return m ? m[2] : null; }

  placeOf(what) {
    if (this.links.has(what)) return what;
    const objective = this.all("objective").find((o) => o[0] === what);
    if (objective) return objective[2];
    const seen = this.all("sees").find((s) => s[0] === what);
    return seen ? seen[1] : null;
  }

  held(point) { return this.all("captured").some((c) => c[0] === point && c[1] === this.team); }

  nextHop(from, to) {
    // Breadth-first over the map's links: the first step of a shortest path.
    if (from === to) return null;
    const previous = new Map([[from, null]]);
    const queue = [from];
    while (queue.length) {
      const node = queue.shift();
      for (const next of this.links.get(node) || []) {
        if (previous.has(next)) continue;
        previous.set(next, node);
        if (next === to) {
          let step = next;
          while (previous.get(step) !== from) step = previous.get(step);
          return step;
        }
        queue.push(next);
      }
    }
    return null;
  }

  // --- orders -----------------------------------------------------------------------------------

  onOrder(order) {
    this.stats.orders += 1;
    const tail = this.orders[this.orders.length - 1];
    if (order.sequence !== null && tail && tail.sequence === order.sequence) {
      this.orders.push(order);
      return;
    }
    for (const old of this.orders) this.finish(old, false, `overwritten by order ${order.id}`);
    this.orders = [order];
  }

  finish(order, success, reason) {
    this.send({ type: "CompletionReport", recipient: order.sender, reply_to: order.id,
                conversation: order.conversation, task: order.task, success, reason });
    if (success) this.stats.completed += 1;
  }

  // The current order's goal: where to be, and whether the order is done.
  goal() {
    while (this.orders.length) {
      const order = this.orders[0];
      const arg = order.args.length ? order.args[0] : null;
      if (order.task === "join") this.superior = arg;
      if (["join", "restrict", "clear_restrictions"].includes(order.task)) {
        this.orders.shift(); this.finish(order, true, ""); continue;
      }
      if (order.task === "send_message") {
        if (this.superior) this.send({ type: "StatusReport", recipient: this.superior, status: String(arg), details: { a0: this.agent } });
        this.orders.shift(); this.finish(order, true, ""); continue;
      }
      const place = this.placeOf(arg);
      if (order.task === "goto" && place === this.here && !this.walkingTo) {
        this.orders.shift(); this.finish(order, true, `at ${place}`); continue;
      }
      if (order.task === "capture" && this.held(arg)) {
        this.orders.shift(); this.finish(order, true, `captured ${arg}`); continue;
      }
      return { place, capture: order.task === "capture" ? arg : null };
    }
    // No order: the nearest capture point the team does not hold, as a freelance bot would.
    const open = this.all("objective").filter((o) => o[1] === "capture" && !this.held(o[0]));
    if (!open.length) return { place: null, capture: null };
    return { place: open[0][2], capture: open[0][0] };
  }

  // --- one tick ---------------------------------------------------------------------------------

  act(verb, args) {
    this.stats.acts += 1;
    this.send({ type: "Act", recipient: "world", verb, args });
  }

  onTick(tick) {
    this.stats.ticks += 1;
    if (this.life === "dead") {
      const spawn = this.first("spawn_option");
      if (spawn) this.act("respawn", { waypoint: spawn[0] });
      return;
    }
    if (this.life !== "alive") return; // downed: nothing to do but wait for a medic
    if (tick % 5 === 0 && this.superior) {
      const health = this.first("health");
      this.send({ type: "StatusReport", recipient: this.superior, status: "alive",
                  details: { life: "alive", waypoint: this.here || "", health: health ? health[0] : 0 } });
    }
    const enemies = this.all("sees").filter((s) => s[3] !== this.team).sort((a, b) => a[2] - b[2]);
    const ammo = this.all("ammo").reduce((sum, a) => sum + a[1], 0);
    if (enemies.length && ammo > 0) this.act("fire", { target: enemies[0][0] });
    else if (ammo === 0 && !this.first("reloading")) this.act("reload", {});
    const { place, capture } = this.goal();
    const here = this.here;
    if (!place || !here) return;
    if (place === here) {
      if (capture && !enemies.length && !this.held(capture)) this.act("capture", { point: capture });
      return;
    }
    const hop = this.nextHop(here, place);
    if (hop && this.walkingTo !== hop) this.act("move", { waypoint: hop });
  }
}

window.WarbandBot = WarbandBot;
