# A warband bot in GDScript, played through `warband gateway` (PROTOCOL.md, section 15): the same
# bot as clients/browser/warband-bot.js. It is a real participant of the run: it registers with
# its agent id and token, gets the world's Percept and the clock's Tick as JSON, and acts by
# sending the world Act messages, which the world checks and answers with ActResult. It follows
# its squad's orders (goto, capture, defend... by the move act along the map's links), shoots
# the nearest enemy it sees, reloads, respawns, answers every order with a CompletionReport and
# reports its status to its superior. The node moves to where the world says the bot is.
extends Node2D

signal finished(result)

var ws = WebSocketClient.new()
var agent = ""
var token = ""
var links = {}
var positions = {}
var facts = []
var orders = []
var superior = null
var close_code = -1
var close_reason = ""
var stats = {"ticks": 0, "acts": 0, "accepted": 0, "refused": 0, "orders": 0, "completed": 0}


func play(url, agent_id, agent_token, map):
	agent = agent_id
	token = agent_token
	for waypoint in map["waypoints"]:
		links[waypoint["id"]] = []
		positions[waypoint["id"]] = Vector2(waypoint["x"], waypoint["y"])
	for link in map["links"]:
		links[link[0]].append(link[1])
		links[link[1]].append(link[0])
	ws.connect("connection_established", self, "_on_open")
	ws.connect("data_received", self, "_on_data")
	ws.connect("server_close_request", self, "_on_close_request")
	ws.connect("connection_closed", self, "_on_closed")
	ws.connect("connection_error", self, "_on_error")
	var error = ws.connect_to_url(url)
	if error != OK:
		emit_signal("finished", {"error": "cannot connect to %s: %d" % [url, error]})


func _process(_delta):
	if ws.get_connection_status() != WebSocketClient.CONNECTION_DISCONNECTED:
		ws.poll()


# --- the connection ---------------------------------------------------------------------------

func send(message):
	ws.get_peer(1).put_packet(JSON.print(message).to_utf8())


func _on_open(_protocol):
	ws.get_peer(1).set_write_mode(WebSocketPeer.WRITE_MODE_TEXT)
	send({"type": "_Register", "sender": agent, "groups": ["ticks"], "token": token})


func _on_data():
	var message = JSON.parse(ws.get_peer(1).get_packet().get_string_from_utf8()).result
	match message["type"]:
		"Percept":
			facts = message["facts"]
			var here = _here()
			if here != null:
				position = positions[here]
		"Tick":
			_on_tick(int(message["tick"]))
			send({"type": "TickDone"})
		"Order":
			_on_order(message)
		"WithdrawOrder":
			for order in orders.duplicate():
				if order["id"] == message["order_id"]:
					orders.erase(order)
		"ActResult":
			if message["accepted"]:
				stats["accepted"] += 1
			else:
				stats["refused"] += 1
		"_Undeliverable":
			print("warband bot: undeliverable: ", message["reason"])


func _on_close_request(code, reason):
	close_code = code
	close_reason = reason


func _on_closed(_clean):
	emit_signal("finished", {"closed": {"code": close_code, "reason": close_reason}, "stats": stats})


func _on_error():
	emit_signal("finished", {"error": "the connection to the gateway failed", "stats": stats})


# --- what it knows ----------------------------------------------------------------------------

func _all(name):
	var found = []
	for fact in facts:
		if fact[0] == name:
			found.append(fact.slice(1, fact.size() - 1))
	return found


func _first(name):
	var found = _all(name)
	return found[0] if not found.empty() else null


func _team():
	var me = _first("self")
	return me[1] if me != null else null


func _life():
	var state = _first("state")
	return state[0] if state != null else "alive"


func _here():
	for at in _all("at"):
		if at[0] == agent:
			return at[1]
	return null


func _walking_to():
	for moving in _all("moving"):
		if moving[0] == agent:
			return moving[2]
	return null


func _place_of(what):
	if what == null:
		return null
	if links.has(what):
		return what
	for objective in _all("objective"):
		if objective[0] == what:
			return objective[2]
	for seen in _all("sees"):
		if seen[0] == what:
			return seen[1]
	return null


func _held(point):
	for captured in _all("captured"):
		if captured[0] == point and captured[1] == _team():
			return true
	return false


func _next_hop(from, to):
	# Breadth-first over the map's links: the first step of a shortest path.
	if from == to:
		return null
	var previous = {from: null}
	var queue = [from]
	while not queue.empty():
		var node = queue.pop_front()
		for next in links[node]:
			if previous.has(next):
				continue
			previous[next] = node
			if next == to:
				var step = next
				while previous[step] != from:
					step = previous[step]
				return step
			queue.append(next)
	return null


# --- orders -----------------------------------------------------------------------------------

func _on_order(order):
	stats["orders"] += 1
	if order["sequence"] != null and not orders.empty() and orders.back()["sequence"] == order["sequence"]:
		orders.append(order)
		return
	for old in orders:
		_finish(old, false, "overwritten by order %s" % order["id"])
	orders = [order]


func _finish(order, success, reason):
	send({"type": "CompletionReport", "recipient": order["sender"], "reply_to": order["id"],
		"conversation": order["conversation"], "task": order["task"], "success": success,
		"reason": reason})
	if success:
		stats["completed"] += 1


# The current order's goal: [where to be, the point to capture there (or null)].
func _goal():
	while not orders.empty():
		var order = orders[0]
		var arg = order["args"][0] if not order["args"].empty() else null
		var task = order["task"]
		if task == "join":
			superior = arg
		if task in ["join", "restrict", "clear_restrictions"]:
			orders.pop_front()
			_finish(order, true, "")
			continue
		if task == "send_message":
			if superior != null:
				send({"type": "StatusReport", "recipient": superior, "status": str(arg), "details": {"a0": agent}})
			orders.pop_front()
			_finish(order, true, "")
			continue
		var place = _place_of(arg)
		if task == "goto" and place == _here() and _walking_to() == null:
			orders.pop_front()
			_finish(order, true, "at %s" % place)
			continue
		if task == "capture" and _held(arg):
			orders.pop_front()
			_finish(order, true, "captured %s" % arg)
			continue
		return [place, arg if task == "capture" else null]
	# No order: the nearest capture point the team does not hold, as a freelance bot would.
	for objective in _all("objective"):
		if objective[1] == "capture" and not _held(objective[0]):
			return [objective[2], objective[0]]
	return [null, null]


# --- one tick ---------------------------------------------------------------------------------

func _act(verb, args):
	stats["acts"] += 1
	send({"type": "Act", "recipient": "world", "verb": verb, "args": args})


static func _nearer(a, b):
	return a[2] < b[2]


func _on_tick(tick):
	stats["ticks"] += 1
	if _life() == "dead":
		var spawn = _first("spawn_option")
		if spawn != null:
			_act("respawn", {"waypoint": spawn[0]})
		return
	if _life() != "alive":
		return  # downed: nothing to do but wait for a medic
	var here = _here()
	if tick % 5 == 0 and superior != null:
		var health = _first("health")
		send({"type": "StatusReport", "recipient": superior, "status": "alive",
			"details": {"life": "alive", "waypoint": here if here != null else "",
				"health": health[0] if health != null else 0}})
	var enemies = []
	for seen in _all("sees"):
		if seen[3] != _team():
			enemies.append(seen)
	enemies.sort_custom(self, "_nearer")
	var ammo = 0
	for clip in _all("ammo"):
		ammo += clip[1]
	if not enemies.empty() and ammo > 0:
		_act("fire", {"target": enemies[0][0]})
	elif ammo == 0 and _first("reloading") == null:
		_act("reload", {})
	var goal = _goal()
	var place = goal[0]
	if place == null or here == null:
		return
	if place == here:
		if goal[1] != null and enemies.empty() and not _held(goal[1]):
			_act("capture", {"point": goal[1]})
		return
	var hop = _next_hop(here, place)
	if hop != null and _walking_to() != hop:
		_act("move", {"waypoint": hop})
