"""Fault: a silent partition. Two hosts (tests/chaoslib/netns.py): the squad's (the broker,
warband's sink, the baseline's ROUTER) and the bots' (warband's source, the baseline's DEALER);
both senders send RATE messages a second across the link while it is cut both ways, again and
again."""

from __future__ import annotations

import contextlib
import time

from .children import Start, children, role_argv, warband_argv
from .netns import Hosts, NetnsUnavailable, two_hosts
from .result import Result, first_after, lost_and_duplicated, progress, worst
from .timing import BLACKHOLE_S, PING_S, RATE


def partition(blackholes: int = 5, gap_s: float = 2.0) -> Result:
    """Blackhole the bots' host from the squad's host ``blackholes`` times for 3 s each."""
    try:
        with two_hosts() as hosts, children() as start:
            return _partition(hosts, start, blackholes, gap_s)
    except NetnsUnavailable as error:
        return Result("partition", None, note=f"skipped: {error}")


def _partition(hosts: Hosts, start: Start, blackholes: int, gap_s: float) -> Result:
    span = 1.0 + blackholes * (BLACKHOLE_S + gap_s)
    count = int(span * RATE)
    listen = f"tcp://{hosts.addr_a}"
    broker = start(
        hosts.run(hosts.a, *warband_argv("broker", "--bind", f"{listen}:5555")), "broker"
    )
    raw_rx = start(
        hosts.run(hosts.a, *role_argv("raw-receiver", f"{listen}:5556", span + 15)), "raw"
    )
    time.sleep(0.3)  # the broker binds before the sink connects (it would retry, but slower)
    sink = start(hosts.run(hosts.a, *role_argv("sink", f"{listen}:5555", span + 12)), "sink")
    for child in (raw_rx, sink):
        child.wait_for("ready", 30)
    raw_tx = start(
        hosts.run(hosts.b, *role_argv("raw-sender", f"{listen}:5556", count, PING_S)), "raw-tx"
    )
    source = start(hosts.run(hosts.b, *role_argv("source", f"{listen}:5555", count)), "source")
    began = max(raw_tx.wait_for("ready", 30)["ready"], source.wait_for("ready", 30)["ready"])
    progress(
        f"partition: {count} messages each way at {RATE}/s, "
        f"{blackholes} blackholes of {BLACKHOLE_S:g} s"
    )
    cuts = _cut_and_heal(hosts, blackholes, gap_s, began + 1.0)
    sent = source.wait_for("sent", span + 30)
    raw_sent = raw_tx.wait_for("sent", 30)
    got = sink.wait_for("received", 30)["received"]
    raw_got = raw_rx.wait_for("received", 30)["received"]
    broker.close()
    lost, duplicated = lost_and_duplicated(got, count)
    raw_lost, raw_dup = lost_and_duplicated(raw_got, count)
    lost_at = [t for name, t in sent["events"] if name == "lost"]
    raw_lost_at = [t for name, t in raw_sent["events"] if name == "disconnected"]
    detect = [first_after(lost_at, cut) for cut, _ in cuts]
    recover = [first_after([t for _, t in got], healed) for _, healed in cuts]
    raw_detect = [first_after(raw_lost_at, cut) for cut, _ in cuts]
    raw_recover = [first_after([t for _, t in raw_got], healed) for _, healed in cuts]
    detect_s, recover_s = worst(detect), worst(recover)
    passed = (
        detect_s is not None
        and detect_s <= BLACKHOLE_S  # noticed during each blackhole, not by the next one
        and recover_s is not None
        and lost == 0
        and duplicated == 0
    )
    met = (
        None
        if detect_s is None or recover_s is None
        else detect_s <= 1.0 + PING_S and (recover_s <= 0.5)
    )
    return Result(
        "partition",
        passed,
        lost,
        duplicated,
        {
            "sent": count,
            "blackholes": blackholes,
            "cut_by": hosts.method,
            "detect_s": detect_s,
            "recover_s": recover_s,
            "detect_each_s": detect,
            "recover_each_s": recover,
            "reported_undeliverable": sent["undeliverable"],
            "baseline_lost": raw_lost,
            "baseline_duplicated": raw_dup,
            "baseline_detect_s": worst(raw_detect),
            "baseline_recover_s": worst(raw_recover),
        },
        note="lost: sent but never received (each one reported to the sender as undeliverable "
        "when reported_undeliverable says so); resend is the reliable-delivery layer's (issue 12)",
        target=f"detect <= {1.0 + PING_S:g} s, recover <= 0.5 s",
        target_met=met,
    )


def _cut_and_heal(
    hosts: Hosts, blackholes: int, gap_s: float, first: float
) -> list[tuple[float, float]]:
    """Cut the link at ``first`` (monotonic) for BLACKHOLE_S, ``blackholes`` times ``gap_s``
    apart; the moments of each cut and heal. The link is healed on the way out, whatever
    happens."""
    cuts: list[tuple[float, float]] = []
    time.sleep(max(0.0, first - time.monotonic()))
    try:
        for number in range(blackholes):
            cut = time.monotonic()
            hosts.blackhole()
            time.sleep(BLACKHOLE_S)
            hosts.heal()
            healed = time.monotonic()
            cuts.append((cut, healed))
            progress(f"partition: blackhole {number + 1}/{blackholes} healed")
            time.sleep(gap_s)
    finally:
        with contextlib.suppress(NetnsUnavailable):
            hosts.heal()
    return cuts
