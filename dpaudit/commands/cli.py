"""The command line: ``dpaudit list | run | bench | check | gate | report | reproduce``.

Command line (docs/guide/commands.md): ``dpaudit list | run | bench | check constants | check
correctness``.

Exit codes: 0 pass, 1 violation, 2 usage or input error (one line on stderr, no traceback, no
output file), 3 inconclusive, 4 an error in the user's code (one line naming the exception and
the user's file:line) or an internal error (one line; ``--debug``, anywhere on the command
line, prints the traceback). Progress bars go to stderr, summaries to stdout.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable

import dpaudit
import dpaudit.algorithms
from dpaudit.algorithms import registry
from dpaudit.auditing import audit
from dpaudit.auditing.plugin import audit_code
from dpaudit.auditing.search import STRATEGIES
from dpaudit.calibrate import mutation
from dpaudit.checks.constants import constants
from dpaudit.checks.correctness import (Trials, check_correctness, default_runs, runs_to_certify,
                                        summary)
from dpaudit.core import executor, interrupt, validate
from dpaudit.core.request import (AuditRequest, Budget, Claim, DEFAULT_ALPHA, DEFAULT_BETA,
                                  DEFAULT_INSTANCES, DEFAULT_MARGIN, DEFAULT_NEIGHBOURS,
                                  DEFAULT_TIME_LIMIT, INSTANCES)
from dpaudit.data.tables import MODELS
from dpaudit.errors import InputError, UserCodeError, user_frame
from dpaudit.gating.gate import GateOptions, gate
from dpaudit import reproduce
from dpaudit.reporting import report, text
from dpaudit.simulation.bench import bench
from dpaudit.verdicts.result import EXIT_CODES, AuditResult, write_json_atomic
from dpaudit.verdicts.verdict import rules_text


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse: usage + error)
        raise InputError(message)


class _Refusal(Exception):
    """An InputError raised in an argparse type, passed on as is.

    An InputError raised in an argparse type, passed on as is: argparse would turn a
    ValueError (InputError is one) into its own "invalid value" message.
    """


def _arg(flag: str, check: Callable, convert: Callable = float) -> Callable:
    """An argparse type: the text converted and checked by :mod:`dpaudit.core.validate`."""
    def parse(text: str) -> object:
        try:
            return validate.parsed(text, flag, convert, check)
        except InputError as e:
            raise _Refusal(str(e)) from None
    return parse


_eps = _arg("--eps", validate.eps)
_alpha = _arg("--alpha", validate.probability)
_beta = _arg("--beta", validate.probability)
_margin = _arg("--margin", validate.margin)
_delta = _arg("--delta", validate.delta)
_seed = _arg("--seed", validate.seed, int)


def _whole(text: str) -> int:
    """A whole number, also written as a float (``5e9``); other text raises ValueError."""
    x = float(text)
    if not x.is_integer():
        raise ValueError(text)
    return int(x)


def _positive_int(flag: str) -> Callable:
    return _arg(flag, validate.positive, int)


def _workers(text: str) -> int:
    n = _positive_int("--workers")(text)
    try:
        return executor.check_workers(n)
    except InputError as e:
        raise _Refusal(str(e)) from None


def _scheduler(text: str) -> str:
    try:
        return executor.check_scheduler(text)
    except InputError as e:
        raise _Refusal(str(e)) from None


def _executor_args(p: argparse.ArgumentParser, workers: int | None = None) -> None:
    """``--workers`` and ``--scheduler``: where a command's chunked computations run."""
    p.add_argument("--workers", type=_workers, default=workers,
                   help="worker processes (default: all cores; at most "
                        f"{executor.WORKERS_PER_CORE} per core); results do not depend on it")
    p.add_argument("--scheduler", type=_scheduler, metavar="NAME",
                   help=f"{executor.PROCESSES} (default: a pool of processes on this machine), "
                        f"{executor.DASK} (a Dask LocalCluster of --workers processes) or a "
                        "Dask scheduler's address tcp://host:port (its workers); default "
                        f"${executor.ENV} or {executor.PROCESSES}; results do not depend on it")


def _params(items: list | None) -> dict:
    out = {}
    for item in [x for group in (items or []) for x in group]:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise InputError(f"malformed --param {item!r}: expected key=value")
        key, value = key.strip(), value.strip()
        if key in out:
            raise InputError(f"--param {key} is given twice ({out[key]} and {value}): "
                             "expected each key once")
        out[key] = value
    return out


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dpaudit", description="Audit differentially private bandit algorithms. "
                "Exit codes: 0 pass, 1 violation (gate: an entry failed), 2 bad input, "
                "3 inconclusive, 4 an error in the user's code or an internal error (one line; "
                "--debug, anywhere on the command line, prints the traceback).")
    p.add_argument("--version", action="version", version=f"dpaudit {dpaudit.__version__}")
    p.add_argument("--debug", action="store_true",
                   help="on an unexpected error, print the traceback (also after the subcommand)")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    ls = sub.add_parser("list", help="registered algorithms: paper, privacy model, claim")
    ls.add_argument("--claims", action="store_true",
                    help="the space each claim covers: every dimension with its scope "
                         "(theorem, proof, option), the source in the paper, the scale and "
                         "the window a search covers")
    ls.add_argument("--algo", metavar="NAME", help="only this algorithm")

    run = sub.add_parser(
        "run", help="audit an algorithm against its privacy claim",
        description="Audit an algorithm against its privacy claim. "
                    + rules_text(EXIT_CODES) + " Exit 2: bad input (one line, nothing "
                    "written); 4: an error in your code or an internal error (one line; "
                    "--debug prints the traceback).")
    run.add_argument("--algo", required=True,
                     help="registry name (see `dpaudit list`), or your own Python callable "
                          "FILE.py:FUNCTION or MODULE:FUNCTION (see --model)")
    run.add_argument("--eps", required=True, type=_eps, help="claimed ε")
    run.add_argument("--delta", type=_delta, default=None,
                     help="claimed DP δ (default 0: pure ε-DP; algorithms calibrated by δ, "
                          "e.g. dp-bai-gauss, run with the δ they are audited at and default "
                          "to their own, see `dpaudit list`)")
    run.add_argument("--model", choices=[str(m) for m in MODELS], default=None,
                     help="privacy model of a FILE.py:FUNCTION algorithm (default user): its "
                          "input is a (T, K) table (user, full), a (K, T) table (stream) or "
                          "one reward (local); set T and K with --param horizon=T means=...")
    run.add_argument("--seed", type=_seed, help="root seed (drawn and reported if omitted)")
    run.add_argument("--runs", type=_arg("--runs", validate.runs, int),
                     help="measurement runs per side per finalist pair at the last look "
                          "(default 2000000; 200000 for FILE.py:FUNCTION callables)")
    run.add_argument("--alpha", type=_alpha, default=DEFAULT_ALPHA,
                     help="total error probability of the verdict (default 0.05)")
    run.add_argument("--beta", type=_beta, default=DEFAULT_BETA,
                     help="the upper bound eps_ub on the measured events' loss holds with "
                          "confidence 1 - beta (default 0.05)")
    run.add_argument("--margin", type=_margin, default=DEFAULT_MARGIN,
                     help="pass needs eps_ub <= (1 + margin) * eps for every measured event, "
                          "else the verdict is inconclusive (default %(default)s)")
    run.add_argument("--max-samples", type=_arg("--max-samples", validate.integer(1), _whole),
                     help="samples cap of an audit of a registered algorithm (runs x samples "
                          "per run, at most, over the instance screen, pilot rounds and "
                          "measurement looks; a round or look that would exceed it is not run; "
                          "counted, so the same seed gives the same result; default: none)")
    run.add_argument("--time-limit", type=_arg("--time-limit", validate.integer(0), _whole),
                     default=int(DEFAULT_TIME_LIMIT), metavar="SECONDS",
                     help="time limit of an audit of a registered algorithm, counted as a "
                          "samples cap: SECONDS times the rate measured on compiled kernels "
                          "before the audit starts, so no clock decides anything later; a "
                          "result it cut short says so and names the --max-samples that "
                          "reproduces it (default 0: none, so the same seed gives the same "
                          "result on every machine; --max-samples is the counted cap)")
    run.add_argument("--no-early-stop", dest="early_stop", action="store_false",
                     help="measure every look instead of stopping once the verdict is settled: "
                          "the tightest eps_lb the runs give (a tightness figure), slower")
    _executor_args(run)
    run.add_argument("--json", metavar="PATH", help="write the verdict JSON here (atomically)")
    run.add_argument("--param", action="append", nargs="+", metavar="KEY=VALUE",
                     help="algorithm parameter, e.g. --param risk=0.05 means=0.9,0.5")
    run.add_argument("--instances", choices=INSTANCES, default=DEFAULT_INSTANCES,
                     help="search (default): screen the claim's space (`dpaudit list "
                          "--claims`) and search the given instance and the best ranked ones for "
                          "neighbours, parameters given pinned; fixed: only the instance the "
                          "parameters give (callables and --pair: always fixed)")
    run.add_argument("--neighbours", choices=STRATEGIES, default=DEFAULT_NEIGHBOURS,
                     help="how the neighbouring pair is found (default search: every position x "
                          "value pattern x base table, white-box screen, successive halving; "
                          "blackbox: without the screen; structure: the algorithm's hand-picked "
                          "rows, one round)")
    run.add_argument("--strict", action="store_true",
                     help="FILE.py:FUNCTION callables: exit 4 when two runs with one seed "
                          "differ (randomness other than rng); without it the result says so "
                          "and carries no reproducing command")
    run.add_argument("--exact", action="store_true",
                     help="also compute the transcript's exact eps and delta(eps) on the "
                          "audited pair: a sum over bit releases, certified bounds over "
                          "Laplace/Gaussian ones (registered algorithms, small instances: "
                          "K = 2, short horizons); exit 2 where one run shows it infeasible "
                          "before the audit, else the result says why it was not computed")
    run.add_argument("--small-delta-runs", type=int, default=None, metavar="N",
                     help="also bound the audited pair's delta-loss at the claim's delta from N "
                          "importance-weighted runs per direction (the release that reads the "
                          "changed entry drawn toward its loss tail; registered algorithms "
                          "with Laplace or Gaussian releases); default: half of --runs for a "
                          "delta > 0 claim (10^6 at the default runs), none for pure DP; 0: "
                          "none")
    run.add_argument("--stratified-runs", type=int, default=0, metavar="N",
                     help="also bound the audited pair's pure eps from N runs per table, "
                          "stratified on two Laplace releases of one phase (the release that "
                          "reads the changed entry and its neighbour; the stratum's mass exact "
                          "from their noise law, the rest counted): reaches events too rare to "
                          "count (registered algorithms, pure-DP claims); default 0: none")
    run.add_argument("--beyond-proof", action="store_true",
                     help="audit a claim outside the range its paper's proof covers (e.g. "
                          "dp-bai-gauss where its Gaussian step fails); refused without it, "
                          "exit 2")
    run.add_argument("--pair", metavar="FILE.json",
                     help="explicit neighbouring tables {\"d\": [[...]], \"d_prime\": [[...]]} "
                          "instead of the search")

    b = sub.add_parser("bench", help="simulation throughput per core on the default instance")
    b.add_argument("--algo", required=True)
    b.add_argument("--eps", type=_eps, default=0.5, help="ε used by the algorithm (default 0.5)")
    b.add_argument("--delta", type=_delta, default=None,
                   help="DP δ of algorithms calibrated by δ (default: theirs)")
    b.add_argument("--param", action="append", nargs="+", metavar="KEY=VALUE")
    b.add_argument("--seconds", type=_arg("--seconds", validate.seconds), default=3.0,
                   help="wall time to measure (default 3, at most 3600); runs still going at "
                        "the end are cut and counted as truncated")
    b.add_argument("--seed", type=_seed, default=0, help="seed of the runs (default 0)")
    b.add_argument("--json", metavar="PATH")
    m = sub.add_parser(
        "mutate", help="mutation analysis: the default audit of each planted noise bug",
        description="Plant one bug at one noise site of a registered algorithm "
                    "(dpaudit.calibrate.mutation): noise x 0, x 0.5 or x 2; sensitivity off "
                    "by one; one noise draw reused; the same noise in every run; a Gaussian "
                    "draw with the Laplace scale. Equivalent mutants (noise x >= 1, or runs "
                    "identical to the algorithm's) are not audited; every other one gets the "
                    "default audit at --eps, killed when it finds a violation (a count off by "
                    "one whose loss a pass allows is audited, out of the score). Prints each "
                    "mutant and the mutation score (killed / bugs). Exit code 0, 2 on bad "
                    "input.")
    who = m.add_mutually_exclusive_group(required=True)
    who.add_argument("--algo", action="append", metavar="ALGO",
                     help="a registered private algorithm with noise sites (repeatable)")
    who.add_argument("--all", action="store_true",
                     help="every registered private algorithm with noise sites")
    m.add_argument("--eps", type=_eps, default=0.5, help="the claimed ε (default 0.5)")
    m.add_argument("--seed", type=_seed, default=1, help="the audits' seed (default 1)")
    m.add_argument("--quick", action="store_true",
                   help=f"{mutation.QUICK_RUNS} measurement runs per side per audit (CI)")
    m.add_argument("--json", metavar="PATH", help="write the analysis here (atomically)")
    m.add_argument("--html", metavar="PATH",
                   help="write its reviewer report here (HTML; `dpaudit report` renders the "
                        "JSON too)")
    _executor_args(m)
    g = sub.add_parser(
        "gate", help="CI gate: run an audit suite, fail on privacy regressions",
        description="Run the audit suite (a folder with suite.toml, or a .toml file) and "
                    "measure each event stored in the baseline again. Exit codes: 0 every "
                    "entry as expected; 1 a verdict not the expected one or a stored event's "
                    "loss significantly risen; 2 bad input, or a missing, corrupt or "
                    "mismatched baseline (the message names the command that regenerates "
                    "it). The suite's false-alarm probability is at most its alpha (default "
                    "1e-3), stated in the output (dpaudit.gate).")
    g.add_argument("suite", help="audits/ (a folder holding suite.toml) or a suite .toml file")
    g.add_argument("--baseline", metavar="PATH",
                   help="baseline JSON (default: baseline.json beside the suite)")
    g.add_argument("--update-baseline", action="store_true",
                   help="write the baseline from this run (regressions are not checked)")
    g.add_argument("--junit", metavar="OUT.xml", help="write JUnit XML here (atomically)")
    g.add_argument("--report-dir", metavar="DIR",
                   help="write each entry's verdict JSON and HTML/Markdown report, and an "
                        "index.html, into DIR")
    _executor_args(g)
    g.add_argument("--beta", type=_beta, default=DEFAULT_BETA,
                   help="each entry's upper bound eps_ub holds with confidence 1 - beta "
                        "(default 0.05)")
    g.add_argument("--margin", type=_margin, default=DEFAULT_MARGIN,
                   help="an entry passes only if its eps_ub is <= (1 + margin) * eps "
                        "(default %(default)s)")
    report.add_parser(sub)
    rp = sub.add_parser(
        "reproduce", help="the papers' experiments, side by side with the papers",
        description="Run a paper's experiments on the reference implementations and write "
                    "its page (figures as PNG and SVG with their data, a paper-vs-ours table "
                    "with a verdict per row) into OUT/PAPER/, listed in OUT/index.html.")
    rp.add_argument("paper", metavar="PAPER|all",
                    help=f"a paper key ({', '.join(reproduce.PAPERS)}) or all")
    rp.add_argument("--quick", action="store_true",
                    help="fewer runs, instances and budgets (at most about 10 minutes a paper "
                         "on 2 cores); the page says so")
    rp.add_argument("--out", default=reproduce.DEFAULT_OUT, metavar="DIR",
                    help="output folder (default %(default)s)")
    rp.add_argument("--seed", type=_seed, default=0, help="root seed (default 0)")
    _executor_args(rp, executor.default_workers())
    c = sub.add_parser("check", help="verification checkers: the papers' constants and "
                                     "the error probability of identification algorithms")
    csub = c.add_subparsers(dest="checker", required=True, parser_class=_Parser)
    k = csub.add_parser(
        "constants", help="the papers' constants with cross-checks (dpaudit.constants)",
        description="Compute every constant of a paper on its worked instance (or on "
                    "--param overrides) and cross-check closed forms against numerical "
                    "optimisation (e.g. T*_TV by Proposition 1 and by a linear program). "
                    "Exit 0 if every check passes, 1 otherwise.")
    k.add_argument("--paper", required=True,
                   choices=registry.PAPERS + tuple(registry.OLD_PAPER_KEYS),
                   metavar="{" + ",".join(registry.PAPERS) + "}",
                   help="azize2023: AdaP-TT characteristic times and thresholds; "
                        "barbara2025: LDP thresholding; chen2024: DP-BAI schedule and hardness "
                        "(the old numbers 004, 001, 000 still work until the next release)")
    k.add_argument("--param", action="append", nargs="+", metavar="KEY=VALUE",
                   help="e.g. means=0.9,0.5 eps=0.5,1 risk=0.01 (azize2023: instance=mu1..mu6)")
    k.add_argument("--json", metavar="PATH", help="write the constants and checks here")
    _correctness_parser(csub)
    return p


def _correctness_parser(csub: argparse._SubParsersAction) -> None:
    ex = "; ".join(f"R={r:g}: {runs_to_certify(r, 0.05)}" for r in (0.1, 0.05, 0.01, 0.001))
    ex99 = "; ".join(f"R={r:g}: {runs_to_certify(r, 0.01)}" for r in (0.05, 0.01))
    c = csub.add_parser(
        "correctness", help="error probability of an identification algorithm vs a risk R",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Simulate full runs of a registered algorithm on fresh rewards (every reward drawn\n"
            "afresh from Bernoulli(means): a new reward table per run; compiled kernels,\n"
            "deterministic for a seed whatever --workers) and check its error probability.\n\n"
            "Fixed-confidence (" + ", ".join(registry.FIXED_CONFIDENCE) + "):\n"
            "  the algorithm's own risk parameter is set to R. A run is an error if it stopped\n"
            "  with a wrong answer (not a best arm; thresholding: returned set != {i: mu_i >=\n"
            "  tau}) or if it did not stop (capped at max_steps or truncated): unstopped runs\n"
            "  are counted, never dropped, reported separately and counted as errors.\n"
            "  Stopping times (mean, 10/50/90/99 % quantiles, max) are shown next to the lower\n"
            "  bound T*(nu; eps)*ln(1/(3R)) of Azize et al. (2023), Theorem 2 (Bernoulli BAI).\n"
            "Fixed-budget (" + ", ".join(registry.FIXED_BUDGET) + "):\n"
            "  R is the tolerated error rate (wrong best arm; thresholding: the loss of eq. (2)\n"
            "  of Barbara et al. (2025)); shown next to the paper's bound where it applies\n"
            "  (Chen et al. (2024) Thm 4.2, Barbara et al. (2025) Thm 3.1), else marked not\n"
            "  applicable.\n\n"
            "Statistics: exact one-sided Clopper-Pearson bounds on the error rate, each at\n"
            "level 1 - alpha (a two-sided 1 - 2 alpha interval). Verdict: violation (exit 1)\n"
            "if the lower bound > R, certified (exit 0) if the upper bound <= R, else\n"
            "inconclusive (exit 3); each verdict is wrong with probability <= alpha. Input\n"
            "errors: exit 2, one line, nothing written.\n\n"
            "Runs needed: with zero errors, certifying R at confidence 1 - alpha needs\n"
            "n >= ln(alpha)/ln(1 - R) runs. At alpha = 0.05: " + ex + ".\n"
            "At alpha = 0.01: " + ex99 + ". Any error raises the number needed; a true error\n"
            "rate near R needs many more runs. Default --runs: 10 x that number for the given\n"
            f"R and alpha, at least 1000 and at most 100000 (e.g. R=0.05: {default_runs(0.05)}, "
            f"R=0.01: {default_runs(0.01)})."))
    c.add_argument("--algo", required=True, help="registry name (see `dpaudit list`)")
    c.add_argument("--risk", required=True, type=_risk,
                   help="R in (0, 1): the checked risk delta (fixed confidence; also passed to "
                        "the algorithm) or tolerated error rate (fixed budget)")
    c.add_argument("--eps", type=_eps, default=None,
                   help="the algorithm's eps (required for private algorithms)")
    c.add_argument("--param", action="append", nargs="+", metavar="KEY=VALUE",
                   help="algorithm parameter, e.g. --param means=0.9,0.5 max_steps=1000000")
    c.add_argument("--runs", type=_arg("--runs", validate.runs, int),
                   help="runs (default: see above)")
    c.add_argument("--seed", type=_seed, default=0, help="root seed (default 0)")
    c.add_argument("--alpha", type=_arg("--alpha", validate.correctness_alpha), default=0.05,
                   help="error probability of each verdict (default 0.05)")
    _executor_args(c)
    c.add_argument("--json", metavar="PATH", help="write the result JSON here (atomically)")


_risk = _arg("--risk", validate.probability)


def _check_correctness(a: argparse.Namespace) -> int:
    validate.output_path("--json", a.json)
    r = check_correctness(a.algo, a.risk, eps=a.eps, params=_params(a.param),
                          trials=Trials(a.runs, a.seed, a.alpha, a.workers or executor.default_workers()))
    if a.json:
        write_json_atomic(a.json, r)
    _out(summary(r))
    return r["exit_code"]


def _value(text: str) -> object:
    """A --param value of `check constants`: an int, a float, a list of numbers or a word."""
    parts = text.split(",")
    try:
        nums = [int(x) if x.strip().lstrip("-").isdigit() else float(x) for x in parts]
    except ValueError:
        return text
    return nums if len(parts) > 1 else nums[0]


def _check_constants(a: argparse.Namespace) -> int:
    validate.output_path("--json", a.json)
    if a.paper in registry.OLD_PAPER_KEYS:
        print(f"dpaudit: warning: {registry.deprecation(a.paper)}", file=sys.stderr)
        a.paper = registry.OLD_PAPER_KEYS[a.paper]
    r = constants(a.paper, {k: _value(v) for k, v in _params(a.param).items()})
    if a.json:
        write_json_atomic(a.json, r)
    checks = r["checks"]
    bad = [ch for ch in checks if not ch["pass"]]
    for ch in checks:
        _out(f"  {'ok  ' if ch['pass'] else 'FAIL'} {ch['name']}: {ch['lhs']:.10g} "
              f"{ch['relation']} {ch['rhs']:.10g} (tol {ch['tol']:g}, {ch['tol_kind']})")
    _out(f"dpaudit check constants --paper {a.paper}: {len(checks) - len(bad)} of {len(checks)} "
          f"checks pass" + (f"; FAILED: {', '.join(ch['name'] for ch in bad)}" if bad else ""))
    return 1 if bad else 0


def _list(a: argparse.Namespace) -> int:
    specs = [registry.get(a.algo)] if a.algo else registry.all_specs()
    if a.claims:
        for s in specs:
            for line in text.claim_space_lines(s.space().rows(), s.theorem, s.name):
                _out(line)
        return 0
    w = max(len(s.name) for s in specs)
    wm = max(len("model"), *(len(s.model) for s in specs))
    wc = max(len(s.claim) for s in specs)
    _out(f"{'name':<{w}}  {'model':<{wm}}  {'claim':<{wc}}  paper / note")
    for s in specs:
        note = f"{s.paper}: {s.title}" + (f" [mutant of {s.mutant_of}]" if s.mutant_of else "")
        _out(f"{s.name:<{w}}  {s.model:<{wm}}  {s.claim:<{wc}}  {note}")
    return 0


def _run(a: argparse.Namespace) -> int:
    code = a.algo.rpartition(":")[0]
    validate.output_path("--json", a.json, {
        "the --pair file": a.pair,
        "the algorithm's file": code if code.endswith(".py") else None})
    res = _audit(a)
    if a.json:
        write_json_atomic(a.json, res.to_dict())
    _out(report.summary(res.to_dict()))
    return res.exit_code


def _audit(a: argparse.Namespace) -> AuditResult:
    """The audit of ``dpaudit run``'s parsed arguments.

    The audit of ``dpaudit run``'s parsed arguments ``a``: a callable
    (``FILE.py:FUNCTION``) or a registered algorithm.
    """
    request = run_request(a)
    return audit_code(request) if ":" in a.algo else audit.audit_registered(request)


def run_request(a: argparse.Namespace) -> AuditRequest:
    """The audit request of ``dpaudit run``'s parsed arguments.

    Args:
        a: the parsed arguments.

    Returns:
        The :class:`~dpaudit.core.request.AuditRequest`; its
        :meth:`~dpaudit.core.request.AuditRequest.command` is the line that reproduces the run
        once the seed is set.

    Raises:
        InputError: ``--model`` given for a registered algorithm, an unknown algorithm name, a
            malformed ``--param``.
    """
    params = _params(a.param)
    if ":" not in a.algo:                    # fails before the parameters are read
        spec = audit.registered_spec(a.algo, a.model)
        notes = shadowed_options(spec, params, vars(a))
        if notes:        # a bad value exits 2 with its one line, before any note
            spec.resolve_params({k: v for k, v in params.items() if k != "delta"})
        for note in notes:
            print(f"dpaudit: note: {note}", file=sys.stderr)
    return AuditRequest(a.algo, Claim(a.eps, a.delta), params, a.neighbours, a.pair,
                        Budget(a.runs, a.alpha, a.beta, a.margin, max_samples=a.max_samples,
                               time_limit=a.time_limit or None, early_stop=a.early_stop),
                        a.seed, a.workers,
                        progress=True, model=a.model, strict=a.strict, instances=a.instances,
                        exact=a.exact, beyond_proof=a.beyond_proof,
                        small_delta_runs=a.small_delta_runs, stratified_runs=a.stratified_runs)


AUDIT_OPTIONS = {"alpha": "the verdict's error probability",
                 "beta": "eps_ub holds with confidence 1 - beta",
                 "margin": "a pass needs eps_ub <= (1 + margin) * eps",
                 "runs": "measurement runs per side", "seed": "the audit's root seed"}


def shadowed_options(spec: object, params: dict, given: dict) -> list[str]:
    """Notes for algorithm parameters that share a name with an audit option.

    ``--param beta=0.05`` sets AdaP-TT's Top Two proportion β, not the audit's ``--beta``: each
    such parameter given gets a note naming both, with their values.

    Args:
        spec: the registered algorithm.
        params: the ``--param`` values given, by name.
        given: the parsed options, by name (the audit's values).

    Returns:
        One note per shadowed name given (empty if none).
    """
    notes, own_names = [], {p.name for p in spec.params}
    for name, what in AUDIT_OPTIONS.items():
        if name in params and name in own_names:
            own = spec.param(name)
            notes.append(f"--param {name}={params[name]} sets {spec.name}'s own parameter "
                         f"{name} ({own.doc}), not the audit's --{name} ({given.get(name)}: "
                         f"{what})")
    return notes


def _report(a: argparse.Namespace) -> int:
    return report.main(a, echo=_out)


def _gate(a: argparse.Namespace) -> int:
    if a.report_dir and not os.path.isdir(a.report_dir):
        raise InputError(f"--report-dir {a.report_dir}: folder does not exist")
    return gate(a.suite, GateOptions(a.baseline, a.junit, a.report_dir, a.update_baseline,
                                     a.workers, a.beta, a.margin), echo=_out)


def _bench(a: argparse.Namespace) -> int:
    validate.output_path("--json", a.json)
    r = bench(a.algo, a.eps, _params(a.param), seconds=a.seconds, seed=a.seed, delta=a.delta)
    if a.json:
        write_json_atomic(a.json, r)
    st = ", ".join(f"{k} {v}" for k, v in r["status"].items()).replace(
        "truncated", "truncated at the time budget")
    means = ",".join(f"{m:.4g}" for m in r["means"])
    _out(f"{r['algorithm']}: {r['steps_per_s']:.3g} steps/s per core, {r['runs_per_s']:.3g} "
          f"runs/s per core ({r['runs']} runs, {r['steps']} steps in {r['seconds']:.1f} s; "
          f"{st}) at eps={r['eps']:g}, means={means}")
    if r.get("precompute"):
        pre = r["precompute"]
        _out(f"  data-independent precomputation (prepare, once per configuration): "
              f"{r['prepare_s']:.3g} s; " + ", ".join(
                  f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in pre.items()))
    return 0


def _mutate(a: argparse.Namespace) -> int:
    validate.output_path("--json", a.json)
    validate.output_path("--html", a.html, {"the --json file": a.json})
    names = tuple(mutation.mutable()) if a.all else tuple(a.algo)
    r = mutation.analyse(mutation.MutationRequest(names, a.eps, a.seed, a.quick, a.workers))
    if a.json:
        write_json_atomic(a.json, r)
    if a.html:
        report.write_report([{**r, "_kind": "mutation"}], a.html)
    for row in r["mutants"]:
        audited = row["status"] != "equivalent"
        tail = f"{row['verdict']}, eps_lb {row['eps_lb']:.4f}" if audited else row["why"]
        mark = {"equivalent": "equivalent", "within_margin": "within margin, out of the score",
                "bug": "killed" if row.get("killed") else "SURVIVED"}[row["status"]]
        _out(f"{row['mutant']}: {mark} ({tail})")
    score = "n/a" if r["score"] is None else f"{r['score']:.3f}"
    _out(f"mutation score {score}: {r['killed']} of {r['bugs']} bugs killed at eps={a.eps:g} "
         f"({r['budget']} budget, seed {a.seed})")
    return 0


def _out(text: str = "") -> None:
    """Print a line on stdout, and drop the rest when its reader has gone.

    A line on stdout; when its reader has gone (``dpaudit run ... | head``) the rest of the
    output is dropped, and the command still finishes and returns its exit code.
    """
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _dispatch(a: argparse.Namespace) -> int:
    """Run the parsed command."""
    return {"list": lambda: _list(a), "run": lambda: _run(a), "bench": lambda: _bench(a),
            "mutate": lambda: _mutate(a),
            "gate": lambda: _gate(a), "report": lambda: _report(a),
            "reproduce": lambda: reproduce.main(a, _out),
            "check": lambda: (_check_correctness(a) if a.checker == "correctness"
                              else _check_constants(a))}[a.command]()


def main(argv: list[str] | None = None) -> int:
    """Run one command line.

    Args:
        argv: the arguments after ``dpaudit`` (None: ``sys.argv[1:]``).

    Returns:
        The exit code (docs/reference/cli.md): 0, 1 or 3 by the verdict or check, 2 bad input,
        4 an error in the user's code or an internal error, 130/143 on SIGINT/SIGTERM.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [x for x in argv if x != "--debug"]
    try:
        a = _parser().parse_args(argv)
        with executor.use(getattr(a, "scheduler", None)):
            return _dispatch(a)
    except (InputError, _Refusal) as e:
        print(f"dpaudit: error: {validate.shown(e)}", file=sys.stderr)
        return 2
    except UserCodeError as e:
        print(f"dpaudit: error in your code: {validate.shown(e)}", file=sys.stderr)
        return 4
    except KeyboardInterrupt as e:
        if not interrupt.installed():    # main() called from Python: a Ctrl-C
            print("dpaudit: interrupted", file=sys.stderr)
            return 130
        print(_error_line(e, debug), file=sys.stderr)   # the command's Ctrl-C never raises:
        return 4                                        # code raised it
    except Exception as e:       # not a verdict: exit 4, one line (module doc)
        if debug:
            traceback.print_exc()
        print(_error_line(e, debug), file=sys.stderr)
        return 4


def _error_line(e: Exception, debug: bool) -> str:
    """One line for an unexpected exception.

    One line for an unexpected exception: the user's frame (the last traceback frame outside
    dpaudit, the standard library and installed packages) when there is one, else an internal
    error; control characters escaped so the line cannot forge another.
    """
    user = user_frame(e.__traceback__)
    what = f"{type(e).__name__}: {e}".encode("unicode_escape").decode("ascii")
    hint = "" if debug else "; run with --debug for the traceback"
    if user:
        return f"dpaudit: error in your code: {what} (in {user[2]} at {user[0]}:{user[1]}){hint}"
    return f"dpaudit: internal error: {what}{hint}"


if __name__ == "__main__":
    sys.exit(main())
