"""Smoke test of ``bench/messaging.py``: a tiny run prints every figure of the JSON contract."""

from __future__ import annotations

import importlib.util
import math
from types import ModuleType

import pytest

from ..conftest import REPO, last_json_line

CONTRACT_KEYS = (
    "rtt_p50_us",
    "rtt_p99_us",
    "throughput_msgs_s",
    "baseline_rtt_p50_us",
    "baseline_throughput_msgs_s",
    "direct_rtt_p50_us",
    "direct_throughput_msgs_s",
)


def _load_benchmark() -> ModuleType:
    """Load the benchmark by file path, as ``warband bench messaging`` does (not in sys.modules)."""
    path = REPO / "bench" / "messaging.py"
    spec = importlib.util.spec_from_file_location("warband_bench_messaging_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.processes
def test_quick_run_prints_positive_figures_for_every_contract_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = _load_benchmark()

    code = bench.main(["--json", "--quick"])

    out = capsys.readouterr().out
    assert 0 == code, out
    report = last_json_line(out)
    assert set(CONTRACT_KEYS) == set(bench.JSON_KEYS)
    for key in (*CONTRACT_KEYS, "rtt_ratio", "throughput_ratio", "rtt_p50_us_notrace"):
        value = report[key]
        assert isinstance(value, float | int) and not isinstance(value, bool), (key, value)
        assert math.isfinite(value) and value > 0, (key, value)
    assert 200 == report["round_trips"]
    assert 2000 == report["messages"]
    assert report["trace_events"] > 0
    assert "baseline, same topology" in out


@pytest.mark.processes
def test_with_curve_the_quick_run_also_measures_tcp_with_and_without_curve(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = _load_benchmark()

    code = bench.main(["--json", "--quick", "--curve", "--round-trips", "50", "--messages", "500"])

    out = capsys.readouterr().out
    assert 0 == code, out
    report = last_json_line(out)
    for key in ("tcp_rtt_p50_us", "curve_rtt_p50_us", "curve_throughput_ratio"):
        assert math.isfinite(report[key]) and report[key] > 0, (key, report[key])
    assert "tcp:// + CURVE" in out


@pytest.mark.processes
def test_with_otel_the_quick_run_also_measures_the_framework_exporting_spans(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip(
        "opentelemetry.sdk", reason="needs the otel extra: pip install 'warband[otel]'"
    )
    bench = _load_benchmark()

    code = bench.main(["--json", "--quick", "--otel", "--round-trips", "50", "--messages", "500"])

    out = capsys.readouterr().out
    assert 0 == code, out
    report = last_json_line(out)
    for key in ("otel_rtt_p50_us", "otel_throughput_msgs_s", "otel_rtt_ratio"):
        assert math.isfinite(report[key]) and report[key] > 0, (key, report[key])
    assert report["otel_spans_exported"] > 0
    assert "OTel export vs tracing off" in out


@pytest.mark.processes
def test_with_broker_and_no_valgrind_it_counts_cpu_time_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _load_benchmark()
    # The same module object the benchmark counts with: without valgrind it falls back.
    import bench.instructions as instructions

    monkeypatch.setattr(instructions, "valgrind", lambda: None)

    code = bench.main(
        ["--broker", "--json", "--frames", "50", "--round-trips", "20", "--warmup", "5"]
    )

    captured = capsys.readouterr()
    assert 0 == code, captured.out
    report = last_json_line(captured.out)
    assert "cpu_ns" == report["unit"]
    for key in (
        "broker_cpu_ns_per_frame",
        "forwarder_cpu_ns_per_frame",
        "actors_cpu_ns_per_round_trip",
        "endpoints_cpu_ns_per_round_trip",
        "broker_vs_forwarder",
        "actors_vs_endpoints",
    ):
        assert math.isfinite(report[key]) and report[key] > 0, (key, report[key])
    assert "broker_target_met" not in report  # the target is in instructions
    assert "valgrind not found" in captured.out
    assert "valgrind not found" in captured.err
