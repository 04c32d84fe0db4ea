# The scene's root: reads the command line (after `--`), fetches the map from the gateway, then
# lets its bot play. When the bot's connection closes it writes the result (--result=FILE) and
# quits: 0 when the gateway closed it normally (the run is over), 1 otherwise.
extends Node2D

var options = {"gateway": "ws://127.0.0.1:8766/ws", "agent": "red-1", "token": "", "map": "warzone", "result": ""}
var http


func _ready():
	Engine.target_fps = 200  # headless, nothing throttles the loop: poll often, not always
	for argument in OS.get_cmdline_args():
		if argument.begins_with("--") and argument.find("=") > 0:
			var key = argument.substr(2, argument.find("=") - 2)
			if options.has(key):
				options[key] = argument.substr(argument.find("=") + 1, argument.length())
	var maps = options["gateway"].replace("ws://", "http://").replace("/ws", "/maps/")
	http = HTTPRequest.new()
	add_child(http)
	http.connect("request_completed", self, "_on_map")
	var error = http.request(maps + options["map"])
	if error != OK:
		_finish({"error": "cannot ask the gateway for the map: %d" % error})


func _on_map(result, code, _headers, body):
	if result != HTTPRequest.RESULT_SUCCESS or code != 200:
		_finish({"error": "no map from the gateway (result %d, HTTP %d)" % [result, code]})
		return
	var map = JSON.parse(body.get_string_from_utf8()).result
	$Bot.connect("finished", self, "_finish")
	$Bot.play(options["gateway"], options["agent"], options["token"], map)


func _finish(result):
	print("warband bot: ", JSON.print(result))
	if options["result"] != "":
		var file = File.new()
		file.open(options["result"], File.WRITE)
		file.store_string(JSON.print(result))
		file.close()
	var clean = result.has("closed") and result["closed"]["code"] == 1000
	get_tree().quit(0 if clean else 1)
