"""`hvpa sim`: the real controller against a simulated cluster, in virtual time, with a report.

    hvpa sim                                   # proposal-1 under a 6 h ramp, report + plot in ./sim-output
    hvpa sim --hvpa kube-apiserver --trace diurnal --duration 12h
    hvpa sim --hvpa my-hvpa.yaml --trace load.csv --strategy HpaBiased
    hvpa sim --hvpa capacity --compare --trace spike   # every strategy over one trace, one table
    hvpa sim --resize-mode InPlaceOrRollout    # pods resized in place (spec.vpa.resizeMode)
    hvpa sim --keep-running                    # then keep the cluster and controller up, until Ctrl-C
    hvpa sim --list                            # built-in scenarios and traces

Writes DIR/report.json (scenario, summary, the target's changes, a
one-minute time series) and DIR/plot.png (with matplotlib, the `plot`
extra); with --curve also DIR/curve.png (the Capacity curve and the path
the target took); with --compare, DIR/report.json holds every run and
DIR/plot-<run>.png (and curve-<run>.png) each picture, a run being a
strategy (`Weighted`) or a strategy resized in place (`Weighted+InPlaceOrRollout`). The
summary (or the comparison) goes to stdout; progress to stderr: a bar on a terminal (or with
--progress), else a line every tenth of a run that lasts over two seconds, for logs.

Exit codes (hvpa.commands): 0 done; 1 the simulation failed (the controller
stopped) or its report could not be written; 2 input that cannot be used
(an unknown scenario or strategy, a malformed trace or Hvpa file, a bad
or too long duration (over 31 days), an output directory that cannot be created or written to), said
before anything is simulated.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from hvpa.commands import BAD_INPUT, FAILED, OK
from hvpa.commands.log_progress import LogProgress

if TYPE_CHECKING:
    from hvpa.sim.runner import Endpoints, RunOptions
    from hvpa.sim.traces import Trace

HELP = "run the controller against a simulated cluster in virtual time, and report"

DEFAULT_SCENARIO: Final = "proposal-1"
# spec.vpa.resizeMode's values (hvpa.api.spec.RESIZE_MODES, not imported: --help stays light).
RESIZE_MODES: Final = ("Rollout", "InPlaceOrRollout", "InPlace")
# What --compare runs each strategy in, unless --resize-mode picks one.
COMPARED_MODES: Final = ("Rollout", "InPlaceOrRollout")
DEFAULT_DURATION: Final = "6h"
# A month of simulated time takes some twenty minutes on one core (about 40 s a simulated day);
# a longer run would look hung, and `1000000h` is a typo, not a plan.
MAX_DURATION_SECONDS: Final = 31 * 24 * 3600
# Past ten thousand nodes the simulated scheduler, not the controller, is what is measured.
MAX_NODES: Final = 10_000


def configure(parser: argparse.ArgumentParser) -> None:
    # Nothing from hvpa.sim is imported here: `hvpa --help` and the other commands must not
    # pay for the API server and the controller (aiohttp, kubernetes_asyncio).
    parser.add_argument(
        "--hvpa",
        default=DEFAULT_SCENARIO,
        metavar="NAME|FILE",
        help=f"a built-in scenario (see --list; default {DEFAULT_SCENARIO}) or an Hvpa manifest, "
        "optionally followed by its workload as a second YAML document",
    )
    parser.add_argument(
        "--trace",
        metavar="NAME[:k=v,...]|FILE.csv",
        help="the load: steady, step, ramp, diurnal, spike, noisy (parameters: see --list), or a "
        "CSV file with time,cpu,memory rows; default: the scenario's (ramp)",
    )
    parser.add_argument(
        "--duration",
        metavar="DURATION",
        help=f"simulated time (Go duration: 90m, 6h), at most {MAX_DURATION_SECONDS // 3600}h; "
        f"default {DEFAULT_DURATION}, or a CSV trace's length",
    )
    parser.add_argument(
        "--strategy",
        metavar="NAME",
        help="override the Hvpa's strategy: Weighted, HpaPreferred, HpaBiased, VpaBiased, Mixed, "
        "Capacity, or the baseline VPAAndHPA (Weighted without weights gets 50/50, Capacity "
        "without a curve one derived from the workload); default: the Hvpa's own",
    )
    parser.add_argument(
        "--compare",
        nargs="?",
        const="all",
        metavar="S1,S2,...",
        help="run several strategies over the same trace, each with the pods rolled out and "
        "resized in place (InPlaceOrRollout) unless --resize-mode picks one, and print one "
        "table (default: all strategies)",
    )
    parser.add_argument(
        "--resize-mode",
        choices=RESIZE_MODES,
        metavar="MODE",
        help="override spec.vpa.resizeMode: Rollout, InPlaceOrRollout or InPlace "
        "(default: the Hvpa's; with --compare, both Rollout and InPlaceOrRollout)",
    )
    parser.add_argument("--seed", type=int, default=1, help="same seed, same report (default 1)")
    parser.add_argument(
        "--output",
        "-o",
        default="sim-output",
        metavar="DIR",
        help="where report.json and the plot go (default ./sim-output)",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        metavar="N",
        help=f"node count, 1 to {MAX_NODES} (default: the scenario's)",
    )
    parser.add_argument(
        "--vpa-half-life",
        metavar="DURATION",
        help="the recommender's half-life (default: a twenty-fourth of the run, 5m to 24h)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KNOB=VALUE",
        help="change one setting of the run: sync-period, vpa-margin, vpa-half-life, hpa-target, "
        "max-replicas, tolerance, resize-tolerance, headroom (repeatable; see docs/simulator.md; default: "
        "none, each knob as the scenario has it)",
    )
    parser.add_argument(
        "--sweep",
        metavar="KNOB=V1,V2,...",
        help="run the comparison (or the one strategy) once per value of a knob, one table each "
        "(default: one run, no sweep)",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar even when stderr is not a terminal",
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw plot.png")
    parser.add_argument(
        "--curve",
        action="store_true",
        help="also draw curve.png: per-pod request against replicas, the Hvpa's Capacity curve "
        "and the path the target took (with --compare, curve-<strategy>.png)",
    )
    parser.add_argument(
        "--keep-running",
        action="store_true",
        help="after the run keep the API server, the cluster and the controller up in real time "
        "(kubeconfig, /metrics and /debug/state are printed) until Ctrl-C",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the built-in scenarios, traces and strategies, and exit",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show the controller's log (info level)"
    )


class _ProgressBar:
    """`[#####.....]  45%  2h42m / 6h0m  Weighted` on one line of stderr, redrawn per percent."""

    WIDTH: Final = 30

    def __init__(self, stream: TextIO, label: str) -> None:
        self._stream = stream
        self._label = label
        self._shown = -1

    def __call__(self, elapsed: float, duration: float) -> None:
        percent = int(100 * elapsed / duration) if duration > 0 else 100
        if percent == self._shown:
            return
        self._shown = percent
        filled = self.WIDTH * percent // 100
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self._stream.write(
            f"\r[{bar}] {percent:3d}%  {_clock(elapsed)} / {_clock(duration)}  {self._label}"
        )
        if percent >= 100:
            self._stream.write("\n")
        self._stream.flush()


class _ProgressLines:
    """Progress for a log, not a terminal: `hvpa sim: Weighted 40%: 2h24m of 6h00m simulated
    in 3.1 s`, a line every tenth of the run, once the run has taken log_progress's quiet
    seconds of wall time (a quick run prints none)."""

    EVERY_PERCENT: Final = 10

    def __init__(
        self, stream: TextIO, label: str, *, wall: Callable[[], float] = time.monotonic
    ) -> None:
        self._log = LogProgress(stream, wall=wall)
        self._label = label
        self._next_percent = 0

    def __call__(self, elapsed: float, duration: float) -> None:
        percent = int(100 * elapsed / duration) if duration > 0 else 100
        if percent < self._next_percent:
            return
        spent = self._log.spent()
        if spent is None:
            return
        self._next_percent = (percent // self.EVERY_PERCENT + 1) * self.EVERY_PERCENT
        self._log.write(
            f"hvpa sim: {self._label} {percent}%: {_clock(elapsed)} of {_clock(duration)} "
            f"simulated in {spent:.1f} s"
        )


def _clock(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60}h{minutes % 60:02d}m"


def _fail(message: str) -> int:
    sys.stderr.write(f"hvpa sim: {message}\n")
    return BAD_INPUT


def _output_problem(output: Path) -> str | None:
    """Why the reports cannot go to `output`, checked before hours are simulated for nothing."""
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return f"cannot create the output directory {output}: {error.strerror or error}"
    if not os.access(output, os.W_OK | os.X_OK):
        return f"cannot write to the output directory {output}: permission denied"
    return None


def _os_failure(error: OSError) -> int:
    """A write that failed after the check (a full disk, a directory removed meanwhile)."""
    where = f": {error.filename}" if error.filename else ""
    sys.stderr.write(f"hvpa sim: {error.strerror or error}{where}\n")
    return FAILED


def _list() -> int:
    from hvpa.sim import traces
    from hvpa.sim.scenarios import BASELINES, SCENARIO_NAMES, STRATEGIES, builtin_scenario

    out = sys.stdout
    out.write("scenarios (--hvpa):\n")
    for name in SCENARIO_NAMES:
        out.write(f"  {name:<16} {builtin_scenario(name).description}\n")
    out.write("\ntraces (--trace NAME[:key=value,...]); every one takes low=, high= (levels) and\n")
    out.write("cpu=, memory= (the total demand at level 1); times are durations or shares (25%):\n")
    doc = traces.__doc__ or ""
    block = doc[doc.index("    steady") : doc.index("A CSV trace")]
    out.write(block.rstrip() + "\n")
    out.write(
        "  FILE.csv         time,cpu,memory rows: seconds, total demand (500m, 2Gi, or numbers)\n"
    )
    out.write(f"\nstrategies (--strategy, --compare): {', '.join(STRATEGIES)}\n")
    out.write(f"baselines (--strategy, --compare): {', '.join(BASELINES)}\n")
    return OK


def _base_options(args: argparse.Namespace) -> RunOptions:
    """What every run of this invocation shares, read once: the scenario as written, the trace
    (a CSV file is read here, not per run) and the run's length; raises ValueError (of several
    kinds) on bad input."""
    import dataclasses

    from hvpa.durations import parse_duration
    from hvpa.sim.runner import RunOptions
    from hvpa.sim.scenarios import load_scenario
    from hvpa.sim.traces import load_csv_trace, parse_trace

    scenario = load_scenario(args.hvpa)
    if args.nodes is not None:
        if not 1 <= args.nodes <= MAX_NODES:
            raise ValueError(f"--nodes must be from 1 to {MAX_NODES} (got {args.nodes})")
        scenario = dataclasses.replace(scenario, nodes=args.nodes, node_range=None)
    trace_spec = args.trace or scenario.trace
    csv_trace = load_csv_trace(Path(trace_spec)) if trace_spec.endswith(".csv") else None
    if args.duration is not None:
        duration = parse_duration(args.duration)
    elif csv_trace is not None and csv_trace.duration_seconds:
        duration = csv_trace.duration_seconds
    else:
        duration = parse_duration(DEFAULT_DURATION)
    if duration <= 0:
        raise ValueError("--duration must be positive")
    _check_length(duration, args.duration, csv_trace, trace_spec)
    trace = csv_trace or parse_trace(
        trace_spec, duration_seconds=duration, peak=scenario.peak, seed=args.seed
    )
    return RunOptions(
        scenario=scenario,
        trace=trace,
        duration_seconds=duration,
        seed=args.seed,
        kubeconfig_path=Path(args.output).resolve() / "kubeconfig" if args.keep_running else None,
    )


def _run_options(
    base: RunOptions,
    strategy: str | None,
    mode: str | None,
    settings: list[tuple[str, str]],
) -> RunOptions:
    """One run: the shared options with its strategy, resize mode and knob `settings`; raises
    ValueError (of several kinds) on bad input."""
    import dataclasses

    from hvpa.sim.knobs import apply_knobs
    from hvpa.sim.scenarios import RUNNABLE

    scenario = base.scenario
    if strategy is not None:
        if strategy not in RUNNABLE:
            raise ValueError(
                f"unknown strategy {strategy!r}: expected one of {', '.join(RUNNABLE)}"
            )
        scenario = scenario.with_strategy(strategy)
    if mode is not None:
        scenario = scenario.with_resize_mode(mode)
    return apply_knobs(dataclasses.replace(base, scenario=scenario), settings)


def _variants(args: argparse.Namespace) -> list[list[tuple[str, str]]]:
    """The knob settings of each comparison: `--set`s, then one `--sweep` value each."""
    from hvpa.sim.knobs import parse_setting, parse_sweep

    # --vpa-half-life is the knob of that name, set before any --set
    flags = [("vpa-half-life", args.vpa_half_life)] if args.vpa_half_life else []
    settings = flags + [parse_setting(text) for text in args.set]
    if args.sweep is None:
        return [settings]
    name, values = parse_sweep(args.sweep)
    return [[*settings, (name, value)] for value in values]


def _check_length(
    duration: float, flag: str | None, csv_trace: Trace | None, trace_spec: str
) -> None:
    """A run longer than MAX_DURATION_SECONDS is refused, naming where its length came from."""
    if duration <= MAX_DURATION_SECONDS:
        return
    bound = f"a run is at most {_clock(MAX_DURATION_SECONDS)} (31 days, some twenty minutes)"
    if flag is not None:
        raise ValueError(f"--duration is {_clock(duration)}; {bound}")
    assert csv_trace is not None  # only a CSV trace gives a length without --duration
    raise ValueError(
        f"the trace {trace_spec} is {_clock(duration)}; {bound}: pass --duration to run its start"
    )


def _strategies(args: argparse.Namespace) -> list[tuple[str | None, str | None]]:
    """(strategy, resize mode) of each run, None: the Hvpa's own; raises ValueError when
    --compare names no strategy."""
    from hvpa.sim.scenarios import BASELINES, STRATEGIES

    if args.compare is None:
        return [(args.strategy, args.resize_mode)]
    if args.compare == "all":
        strategies = list(STRATEGIES)
    else:
        strategies = [s.strip() for s in args.compare.split(",") if s.strip()]
    if not strategies:
        raise ValueError(f"--compare {args.compare!r} names no strategy")
    modes = [args.resize_mode] if args.resize_mode else list(COMPARED_MODES)
    # A baseline runs once, in --resize-mode's mode if given (VPAAndHPA: in place), else the
    # Hvpa's own (VPAAndHPA: by eviction), not once per mode.
    return [
        (strategy, mode)
        for strategy in strategies
        for mode in (modes if strategy not in BASELINES else [args.resize_mode])
    ]


def _write_json(path: Path, document: Any) -> None:
    import orjson

    path.write_bytes(
        orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    )


def _plot(report: dict[str, Any], path: Path, args: argparse.Namespace, out: TextIO) -> None:
    from hvpa.sim.plot import plot_available, write_plot

    if args.no_plot:
        return
    if not plot_available():
        out.write("plot skipped: matplotlib is not installed (pip install 'hvpa[plot]')\n")
        return
    write_plot(report, path)
    out.write(f"plot: {path}\n")


def _curve(options: RunOptions, report: dict[str, Any], path: Path, out: TextIO) -> None:
    from hvpa.api import apply_defaults, parse_hvpa
    from hvpa.sim.curveplot import write_curve_plot
    from hvpa.sim.plot import plot_available

    if not plot_available():
        out.write("curve skipped: matplotlib is not installed (pip install 'hvpa[plot]')\n")
        return
    spec = apply_defaults(parse_hvpa(dict(options.scenario.hvpa))).spec
    template = spec.hpa.template.spec
    low = template.min_replicas or 1 if template else 1
    high = template.max_replicas if template else report["summary"]["replicas"]["max"]
    capacity = options.scenario.hvpa["spec"].get("capacity")
    write_curve_plot(report, capacity, (low, high), path)
    out.write(f"curve: {path}\n")


def _serving(endpoints: Endpoints) -> None:
    out = sys.stdout
    namespace, lease = endpoints.lease.split("/", 1)
    out.write(
        "\nkept running in real time (Ctrl-C to stop), the cluster's clock now the machine's:\n"
        f"  API server     {endpoints.api_server}\n"
        f"  kubeconfig     {endpoints.kubeconfig}   (kubectl --kubeconfig {endpoints.kubeconfig} get pods -A)\n"
        f"  /metrics       {endpoints.metrics}\n"
        f"  /debug/state   {endpoints.debug_state}\n"
        f"  /healthz       {endpoints.healthz}\n"
        f"  /readyz        {endpoints.readyz}\n"
        f"  leader lease   {endpoints.lease}   (kubectl -n {namespace} get lease {lease})\n"
    )
    out.flush()


def run(args: argparse.Namespace) -> int:
    if args.list:
        return _list()
    if args.compare is not None and args.strategy is not None:
        return _fail(
            "--compare and --strategy exclude each other (--compare S1,S2 picks strategies)"
        )
    if args.compare is not None and args.keep_running:
        return _fail("--keep-running runs one strategy; it cannot be combined with --compare")
    if args.sweep is not None and args.keep_running:
        return _fail("--keep-running runs one strategy once; it cannot be combined with --sweep")

    try:
        import looptime  # noqa: F401  (the virtual clock; not in the controller's image)
    except ImportError:
        return _fail("the simulator needs the sim extra: pip install 'hvpa[sim]' (looptime)")

    from hvpa import logs

    logs.configure("info" if args.verbose else "warning")
    try:
        base = _base_options(args)
        runs = _strategies(args)
        sweep = [
            (settings, [_run_options(base, strategy, mode, settings) for strategy, mode in runs])
            for settings in _variants(args)
        ]
    except ValueError as error:  # TraceError, ScenarioError, DurationError, KnobError
        return _fail(str(error))
    output = Path(args.output)
    problem = _output_problem(output)
    if problem is not None:
        return _fail(problem)
    try:
        if args.sweep is not None:
            return _run_sweep(args, sweep, output)
        return _run_one(args, sweep[0][1], output)
    except BrokenPipeError:
        raise  # stdout's reader went away: hvpa.cli.main ends the command quietly
    except OSError as error:
        return _os_failure(error)


def _simulate(
    args: argparse.Namespace,
    options: RunOptions,
    *,
    title: str = "",
    on_report: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any] | None:
    """One run with its header line and progress on stderr; None when it failed (said on
    stderr)."""
    from hvpa.sim.runner import simulate

    out = sys.stdout
    scenario = options.scenario
    settings = f", {title}" if title else ""
    out.write(
        f"hvpa sim: {scenario.name} ({scenario.label}), trace {options.trace.name}, "
        f"{_clock(options.duration_seconds)}, seed {options.seed}{settings}\n"
    )
    out.flush()
    show_progress = args.progress or sys.stderr.isatty()
    progress = (_ProgressBar if show_progress else _ProgressLines)(sys.stderr, scenario.label)
    started = time.perf_counter()
    try:
        report = simulate(
            options,
            progress=progress,
            on_report=on_report,
            keep_running=args.keep_running,
            on_serving=_serving,
        )
    except RuntimeError as error:
        sys.stderr.write(f"hvpa sim: {error}\n")
        return None
    sys.stderr.write(
        f"simulated {_clock(options.duration_seconds)} in {time.perf_counter() - started:.1f} s\n"
    )
    return report


def _run_sweep(
    args: argparse.Namespace,
    sweep: list[tuple[list[tuple[str, str]], list[RunOptions]]],
    output: Path,
) -> int:
    """Every variant's runs, one comparison table each; report.json holds them all."""
    from hvpa.sim.knobs import describe_settings
    from hvpa.sim.report import compare_table

    out = sys.stdout
    variants = []
    for settings, runs in sweep:
        title = describe_settings(dict(settings))
        summaries: list[tuple[str, dict[str, Any]]] = []
        for options in runs:
            report = _simulate(args, options, title=title)
            if report is None:
                return FAILED
            summaries.append((options.scenario.label, report["summary"]))
        out.write(f"\n{title}\n" + compare_table(summaries) + "\n")
        variants.append(
            {
                "settings": dict(settings),
                "compare": [{"strategy": s, "summary": summary} for s, summary in summaries],
            }
        )
    _write_json(output / "report.json", {"sweep": variants})
    out.write(f"report: {output / 'report.json'}\n")
    return OK


def _run_one(args: argparse.Namespace, runs: list[RunOptions], output: Path) -> int:
    """One run (or one comparison of strategies): tables, report.json, plots."""
    from hvpa.sim.report import compare_table, summary_table

    out = sys.stdout
    reports: list[tuple[str, dict[str, Any]]] = []
    for options in runs:

        def write_single(report: dict[str, Any], run: RunOptions = options) -> None:
            out.write(summary_table(report["summary"]))
            _write_json(output / "report.json", report)
            out.write(f"report: {output / 'report.json'}\n")
            _plot(report, output / "plot.png", args, out)
            if args.curve:
                _curve(run, report, output / "curve.png", out)
            out.flush()

        try:
            report = _simulate(
                args, options, on_report=write_single if args.compare is None else None
            )
        except KeyboardInterrupt:
            if args.keep_running:
                out.write("stopped\n")
                return OK
            raise
        if report is None:
            return FAILED
        reports.append((options.scenario.label, report))
    if args.compare is not None:
        out.write("\n" + compare_table([(s, r["summary"]) for s, r in reports]))
        _write_json(
            output / "report.json",
            {
                "compare": [{"strategy": s, "summary": r["summary"]} for s, r in reports],
                "runs": {s: r for s, r in reports},
            },
        )
        out.write(f"report: {output / 'report.json'}\n")
        for (strategy, report), options in zip(reports, runs, strict=True):
            _plot(report, output / f"plot-{strategy}.png", args, out)
            if args.curve:
                _curve(options, report, output / f"curve-{strategy}.png", out)
    return OK
