"""Two hosts on one machine: network namespaces joined by a veth pair with link-local
addresses, and the cut of the link between them (the partition fault, the determinism test).

Needs CAP_NET_ADMIN and iproute2; :func:`netns_available` says why not where it is missing.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass


class NetnsUnavailable(Exception):
    """``ip netns add`` is not permitted here (no CAP_NET_ADMIN) or ``ip``/``tc`` are missing."""


@dataclass
class Hosts:
    """Two namespaces joined by one veth pair: ``a`` (169.254.77.1) and ``b`` (169.254.77.2)."""

    a: str
    b: str
    dev_a: str
    dev_b: str
    addr_a: str = "169.254.77.1"
    addr_b: str = "169.254.77.2"

    def run(self, host: str, *argv: str) -> list[str]:
        """``argv`` run inside the namespace ``host``."""
        return ["ip", "netns", "exec", host, *argv]

    method: str = ""
    """How the link is cut: ``netem`` (100% loss) where the kernel has sch_netem, else ``link``
    (both ends set down: no frame leaves, nothing is answered; the kernel keeps the sockets)."""

    def blackhole(self) -> None:
        """Cut the link both ways (the first cut finds out which ``method`` the kernel allows)."""
        if not self.method:
            try:
                self._netem("add", "netem", "loss", "100%")
                self.method = "netem"
                return
            except NetnsUnavailable:
                self.method = "link"
        if self.method == "netem":
            self._netem("add", "netem", "loss", "100%")
        else:
            self._links("down")

    def heal(self) -> None:
        """Undo :meth:`blackhole`."""
        if self.method == "netem":
            self._netem("del")
        elif self.method == "link":
            self._links("up")

    def _netem(self, action: str, *qdisc: str) -> None:
        for host, dev in ((self.a, self.dev_a), (self.b, self.dev_b)):
            _ip("netns", "exec", host, "tc", "qdisc", action, "dev", dev, "root", *qdisc)

    def _links(self, state: str) -> None:
        if state == "up":
            self._pin_neighbours()
        for host, dev in ((self.a, self.dev_a), (self.b, self.dev_b)):
            _ip("-n", host, "link", "set", dev, state)

    def _pin_neighbours(self) -> None:
        """Give each end the other's MAC address for good before the link comes up.

        Setting a link down flushes its neighbour table, so without this the first frame
        after the heal waits for ARP; the two ends come up one after the other, and an ARP
        request sent before the far end is up is retried only a second later: the flow
        resumed 1.02 s after some heals (the raw baseline's too) instead of at once. A
        permanent entry added while the link is down survives it coming up.
        """
        for host, dev, far_host, far_dev, far_addr in (
            (self.a, self.dev_a, self.b, self.dev_b, self.addr_b),
            (self.b, self.dev_b, self.a, self.dev_a, self.addr_a),
        ):
            mac = _mac(far_host, far_dev)
            _ip(
                "-n",
                host,
                "neigh",
                "replace",
                far_addr,
                "lladdr",
                mac,
                "dev",
                dev,
                "nud",
                "permanent",
            )


def _mac(host: str, dev: str) -> str:
    shown = subprocess.run(
        ["ip", "-n", host, "-o", "link", "show", dev], capture_output=True, text=True, check=False
    ).stdout.split()
    if "link/ether" not in shown:
        raise NetnsUnavailable(f"`ip -n {host} link show {dev}` gave no link/ether address")
    return shown[shown.index("link/ether") + 1]


def _ip(*argv: str) -> None:
    completed = subprocess.run(["ip", *argv], capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise NetnsUnavailable(f"`ip {' '.join(argv)}` failed: {completed.stderr.strip()}")


@contextlib.contextmanager
def two_hosts() -> Iterator[Hosts]:
    """Make the two namespaces and their link; remove them on the way out, whatever happens."""
    if shutil.which("ip") is None or shutil.which("tc") is None:
        raise NetnsUnavailable("the `ip` and `tc` commands (iproute2) are not installed")
    tag = f"{os.getpid() % 100000}{random.randrange(100):02d}"
    hosts = Hosts(a=f"wbc{tag}a", b=f"wbc{tag}b", dev_a=f"wv{tag}a", dev_b=f"wv{tag}b")
    made: list[str] = []
    try:
        for name in (hosts.a, hosts.b):
            _ip("netns", "add", name)
            made.append(name)
        _ip("link", "add", hosts.dev_a, "type", "veth", "peer", "name", hosts.dev_b)
        _ip("link", "set", hosts.dev_a, "netns", hosts.a)
        _ip("link", "set", hosts.dev_b, "netns", hosts.b)
        for host, dev, addr in (
            (hosts.a, hosts.dev_a, hosts.addr_a),
            (hosts.b, hosts.dev_b, hosts.addr_b),
        ):
            _ip("-n", host, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", host, "link", "set", dev, "up")
            _ip("-n", host, "link", "set", "lo", "up")
        yield hosts
    finally:
        for name in made:  # deleting a namespace deletes its end of the veth, and so the pair
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, check=False)


def hosts_of_this_process() -> list[str]:
    """The namespaces :func:`two_hosts` made in this process that still exist. Only this
    process's: another test run on the same machine (or another pytest worker) may have its
    own up right now, and they are none of this one's business."""
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    ours = re.compile(rf"wbc{os.getpid() % 100000}[0-9]{{2}}[ab]")  # as two_hosts() names them
    names = (line.split()[0] for line in listing.stdout.splitlines() if line.strip())
    return [name for name in names if ours.fullmatch(name)]


def netns_available() -> str | None:
    """None when namespaces can be made here, else the reason they cannot."""
    try:
        with two_hosts():
            return None
    except NetnsUnavailable as error:
        return str(error)
