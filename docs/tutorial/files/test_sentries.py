# test_sentries.py -- run with: python -m pytest test_sentries.py
from sentries import sentry_role

from warband.agents import Agent
from warband.messaging import Act, Percept
from warband.testing import Drive
from warband.world import load_map


def test_a_sentry_walks_toward_the_capture_point_nearest_its_base():
    sentry = Agent("red-1", sentry_role(load_map("test")), team="red")  # red's base: r1
    here = [["self", "red-1", "red", "assault"], ["state", "alive"], ["at", "red-1", "r1"]]
    with Drive(sentry) as drive:  # no broker, no sockets: tick by tick
        sent = drive.tick(Percept(recipient="red-1", facts=here))
    assert [("move", {"waypoint": "m1"})] == [(a.verb, a.args) for a in sent if isinstance(a, Act)]
