# sentries.py -- red's bots are sentries, blue plays Killzone's hierarchy
from pathlib import Path

from warband import Scenario
from warband.agents.bot import bot_role
from warband.agents.commander import travel_distance
from warband.agents.factions import check_map, faction_actors
from warband.world import World, load_map

scenario = Scenario("sentries", ticks=200, params={"map": "warzone", "bots": 3})
MODE = "capture_and_hold"


def sentry_role(game_map):
    distance = travel_distance(game_map)

    def post(facts, team):
        """The capture point nearest the team's base."""
        base = game_map.spawns(str(team))[0].waypoint
        points = sorted(m.waypoint for m in game_map.markers_of("capture"))
        return min(points, key=lambda waypoint: distance(base, waypoint))

    domain = Path(__file__).parent / "sentry.htn"
    return bot_role(game_map, domain=domain, functions={"post": post})


def bots(team, params):
    return [f"{team}-{n}" for n in range(1, int(params["bots"]) + 1)]


@scenario.world
def world(params, seed):
    game_map = load_map(params["map"])
    check_map(game_map, MODE, ["red", "blue"])
    roster = {b: {"team": t, "class": "assault"} for t in ("red", "blue") for b in bots(t, params)}
    return World.create(game_map, seed=seed, mode=MODE, roster=roster)


@scenario.observers  # the blue commander perceives what its team sees
def observers(params):
    return {"blue-commander": "blue"}


@scenario.actors
def actors(params, seed):
    game_map = load_map(params["map"])
    sentry = sentry_role(game_map)
    red = faction_actors(game_map, "red", bots("red", params), control="freelance", bot=sentry)
    return [*red, *faction_actors(game_map, "blue", bots("blue", params), mode=MODE)]
