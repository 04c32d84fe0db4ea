"""The harnesses of ``warband bench chaos`` (bench/chaos.py keeps the CLI, the registry of faults
and the report), one concept per module:

- ``timing``: the rates and intervals the faults, their baselines and the child roles share;
- ``result``: one fault's figures (:class:`Result`), the helpers that reduce times to them,
  and its progress lines;
- ``netns``: two hosts on one machine (network namespaces joined by a veth pair) and the cut;
- ``children``: child processes speaking JSON lines, killed and reaped by their owner;
- ``roles``: what a child does (``python -m tests.chaoslib.roles ROLE ...``): the raw-pyzmq
  sender and receiver, or one of the warband actors of ``actors``;
- ``processes``: the processes of a ``warband run --processes`` read from /proc, scratch folders;
- one module per family of faults, each fault next to its raw-pyzmq baseline: ``partition``,
  ``stuck``, ``broker_loss`` (broker-restart, reconnect-storm), ``backpressure``, ``lifecycle``
  (churn, clean-exit, start-order, restart-intensity), ``strangers`` and ``fuzz``.

The harnesses the tests in tests/messaging share are in tests/chaoslib/faults.py.
"""
