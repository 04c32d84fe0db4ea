"""Fault: a silent partition. Two hosts (tests/chaoslib/netns.py): the squad's (the broker,
warband's sink, the baseline's ROUTER) and the bots' (warband's source, the baseline's DEALER);
both senders send RATE messages a second across the link while it is cut both ways, again and
again. A cut lasts BLACKHOLE_S, longer only until warband's source has noticed it (at most
FAULT_AT_MOST_S: a busy machine); the children end when the cuts are over (a stop file)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from warband.testing import wait_until

from .children import Start, children, role_argv, warband_argv
from .netns import Hosts, NetnsUnavailable, two_hosts
from .processes import scratch_dir
from .result import Result, first_after, lost_and_duplicated, progress, worst
from .timing import BLACKHOLE_S, FAULT_AT_MOST_S, PING_S, RATE


def partition(blackholes: int = 5, gap_s: float = 2.0) -> Result:
    """Blackhole the bots' host from the squad's host ``blackholes`` times for 3 s each."""
    try:
        with two_hosts() as hosts, children() as start:
            return _partition(hosts, start, blackholes, gap_s)
    except NetnsUnavailable as error:
        return Result("partition", None, note=f"skipped: {error}")


def _partition(hosts: Hosts, start: Start, blackholes: int, gap_s: float) -> Result:
    # The most the run can last (every cut at its longest); the stop file ends it sooner.
    span = 1.0 + blackholes * (FAULT_AT_MOST_S + gap_s)
    at_most = int(span * RATE)
    listen = f"tcp://{hosts.addr_a}"
    with scratch_dir() as tmp:
        stop = tmp / "stop"
        broker = start(
            hosts.run(hosts.a, *warband_argv("broker", "--bind", f"{listen}:5555")), "broker"
        )
        raw_rx = start(
            hosts.run(hosts.a, *role_argv("raw-receiver", f"{listen}:5556", span + 15, stop)),
            "raw",
        )
        time.sleep(0.3)  # the broker binds before the sink connects (it would retry, but slower)
        sink = start(
            hosts.run(hosts.a, *role_argv("sink", f"{listen}:5555", span + 12, stop)), "sink"
        )
        for child in (raw_rx, sink):
            child.wait_for("ready", 30)
        raw_tx = start(
            hosts.run(hosts.b, *role_argv("raw-sender", f"{listen}:5556", at_most, PING_S, stop)),
            "raw-tx",
        )
        source = start(
            hosts.run(hosts.b, *role_argv("source", f"{listen}:5555", at_most, stop)), "source"
        )
        began = max(raw_tx.wait_for("ready", 30)["ready"], source.wait_for("ready", 30)["ready"])
        progress(
            f"partition: {RATE} messages a second each way, "
            f"{blackholes} blackholes of {BLACKHOLE_S:g} s"
        )

        def noticed_since(moment: float) -> bool:
            return any(
                line.get("noticed") == "lost" and line["at"] >= moment for line in source.lines
            )

        cuts = _cut_and_heal(hosts, blackholes, gap_s, began + 1.0, noticed_since)
        stop.touch()  # the senders end, the receivers STOP_GRACE_S later
        sent = source.wait_for("sent", 60)
        raw_sent = raw_tx.wait_for("sent", 30)
        got = sink.wait_for("received", 30)["received"]
        raw_got = raw_rx.wait_for("received", 30)["received"]
        broker.close()
    count = sent["sent"]
    lost, duplicated = lost_and_duplicated(got, count)
    raw_lost, raw_dup = lost_and_duplicated(raw_got, raw_sent["sent"])
    lost_at = [t for name, t in sent["events"] if name == "lost"]
    raw_lost_at = [t for name, t in raw_sent["events"] if name == "disconnected"]
    detect = [first_after(lost_at, cut) for cut, _ in cuts]
    recover = [first_after([t for _, t in got], healed) for _, healed in cuts]
    raw_detect = [first_after(raw_lost_at, cut) for cut, _ in cuts]
    raw_recover = [first_after([t for _, t in raw_got], healed) for _, healed in cuts]
    detect_s, recover_s = worst(detect), worst(recover)
    passed = (
        None not in detect
        # noticed during each blackhole, not by the next one
        and all(
            seen is not None and seen <= healed - cut
            for seen, (cut, healed) in zip(detect, cuts, strict=True)
        )
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
            "blackhole_each_s": [round(healed - cut, 3) for cut, healed in cuts],
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
    hosts: Hosts,
    blackholes: int,
    gap_s: float,
    first: float,
    noticed_since: Callable[[float], bool],
) -> list[tuple[float, float]]:
    """Cut the link at ``first`` (monotonic) for BLACKHOLE_S, ``blackholes`` times ``gap_s``
    apart; the moments of each cut and heal. A cut not noticed by then (``noticed_since``)
    lasts until it is (at most FAULT_AT_MOST_S) and half a second more, for the sender to see
    its broker lost before it is back. The link is healed on the way out, whatever happens."""
    cuts: list[tuple[float, float]] = []
    time.sleep(max(0.0, first - time.monotonic()))
    try:
        for number in range(blackholes):
            cut = time.monotonic()
            hosts.blackhole()
            time.sleep(BLACKHOLE_S)
            _hold_until_noticed(cut, noticed_since)
            hosts.heal()
            healed = time.monotonic()
            cuts.append((cut, healed))
            progress(f"partition: blackhole {number + 1}/{blackholes} healed")
            time.sleep(gap_s)
    finally:
        with contextlib.suppress(NetnsUnavailable):
            hosts.heal()
    return cuts


def _hold_until_noticed(cut: float, noticed_since: Callable[[float], bool]) -> None:
    """Keep the link cut past BLACKHOLE_S while the sender has not noticed the cut made at
    ``cut``: until it has (at most FAULT_AT_MOST_S from the cut) and half a second more."""
    if noticed_since(cut):
        return
    wait_until(
        lambda: noticed_since(cut) or time.monotonic() > cut + FAULT_AT_MOST_S,
        timeout=FAULT_AT_MOST_S,
        interval=0.05,
        what="the cut noticed or FAULT_AT_MOST_S",
    )
    time.sleep(0.5)
