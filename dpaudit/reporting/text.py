"""A result's numbers in words.

A result's numbers in words: the lines of the text summary that ``dpaudit run`` prints
and the sentences the reports share (:mod:`dpaudit.reporting.report` renders them with the
templates). Every function reads the result's JSON (docs/reference/verdict-json.md).
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from dpaudit.core.terms import Side


def summary_lines(doc: dict) -> dict:
    """The parts of the text summary of an audit result (template ``summary.txt.j2``).

    Args:
        doc: a result's verdict JSON.

    Returns:
        {part: lines}: head, reason, bounds, planning figure, neighbours, event, counts, search,
        white-box, coverage, reproducibility, seed and time.
    """
    m = doc["counts"]["measurement"]
    claim = doc["claim"]
    eps, delta, beta = claim["eps"], claim["delta"], doc["beta"]
    shown = f"eps={eps:g}" + (f", delta={delta:g}" if delta else " (pure DP)")
    return {
        "algorithm": doc["algorithm"], "claim": shown, "verdict": verdict_text(doc),
        "reason": doc.get("reason"), "cut_short": cut_short_text(doc), "bound": bound_text(doc),
        "upper": upper_line(float(doc["eps_ub"]), beta, eps, doc["margin"]),
        "detectable": detectable_line(float(doc["detectable_loss"]), beta,
                                      float(doc["detectable_eps"]), m["runs_d"] > 0),
        "instance": instance_lines(doc.get("instance_search"), doc["params"]),
        "neighbours": neighbours_lines(doc["neighbours"]), "event": doc["event"]["text"],
        "counts": (f"d {m['hits_d']}/{m['runs_d']}, d' {m['hits_d_prime']}/"
                   f"{m['runs_d_prime']}; {m['tests']} tests at alpha {levels_text(m)}, "
                   f"stopped: {m['stopped']}"),
        "search": search_lines(doc["search"]), "whitebox": whitebox_lines(doc.get("whitebox")),
        "coverage": coverage_text(doc["coverage"]),
        "exact": exact_text(doc["exact"], float(doc["eps_lb"])) if doc.get("exact") else None,
        "small_delta": small_delta_text(doc["small_delta"]) if doc.get("small_delta") else None,
        "stratified": (stratified_text(doc["stratified"], doc.get("exact"))
                       if doc.get("stratified") else None),
        "not_reproducible": doc.get("reproducible") is False,
        "seed": doc["seed"], "runtime": f"{float(doc['runtime_s']):.1f}"}


def verdict_text(doc: dict) -> str:
    """The verdict in capitals, marked when the samples cap or the time limit cut it short.

    Args:
        doc: a result's verdict JSON.

    Returns:
        e.g. "PASS" or "PASS (cut short)".
    """
    return doc["verdict"].upper() + (" (cut short)" if doc.get("cut_short") else "")


def cut_short_text(doc: dict) -> str:
    """Where a cap cut a pass or a violation short, and how to reproduce it.

    "" if no cap did, or for an inconclusive verdict, whose reason says it first.

    Args:
        doc: a result's verdict JSON.

    Returns:
        The line's text, with the command that reproduces the result when there is one.
    """
    if not doc.get("cut_short") or doc["verdict"] == "inconclusive":
        return ""
    again = f"; reproduce it with {doc['command']}" if doc.get("command") else ""
    return (f"{doc['cut_short']}; the verdict holds at its alpha and beta, but a larger budget "
            f"may search further{again}")


def bound_text(doc: dict) -> str:
    """ε_lb and the point estimate of a result in words (text output and reports).

    A saturated bound (no hit on the denominator side: the largest bound the budget can give,
    whatever the loss) is labelled so; the estimate is the δ-loss ln((p̂_num − δ)/p̂_den) of the
    measured event.

    Args:
        doc: a result's verdict JSON.

    Returns:
        The line.
    """
    m = doc["counts"]["measurement"]
    proof = ""
    if doc.get("evidence") == "white-box proof":     # results made before the key: statistical
        proof = f"white-box proof: {doc['whitebox']['reports']['text']}; statistical "
    text = (f"{proof}eps_lb = {float(doc['eps_lb']):.4f} at confidence "
            f"{100 * (1 - doc['alpha']):.6g}% (statistical evidence, alpha = {doc['alpha']:g}")
    hat = doc.get("eps_hat")
    if hat is None:
        return text + "; nothing measured, no point estimate)"
    name = "delta-loss" if doc["claim"].get("delta") else "point"
    hat = float(hat)                       # ("inf", "nan" in JSON parse too)
    text += f"; {name} estimate {hat:.4f}"
    if m.get("stopped") == "violation":
        text += " at the stopping look, biased upward by the early stop"
    text += ")"
    if doc.get("eps_lb_saturated"):
        den = Side.D_PRIME.label if doc["event"].get("numerator") == Side.D.label else Side.D.label
        text += (f"; saturated: no hit on {den} in {m['runs_d']} runs, so this is the largest "
                 "bound that budget can give at this alpha, not a measured size (the loss may "
                 "be infinite)")
    return text


def levels_text(m: dict) -> str:
    """The tests' levels of a result's measurement.

    Args:
        m: the result's ``counts.measurement``: per-look levels (``alpha_per_look``) or, in
            results written before the looks were weighted, one level for all
            (``alpha_per_test``).

    Returns:
        The levels in words.
    """
    if m.get("alpha_per_look"):
        return " / ".join(f"{a:.3g}" for a in m["alpha_per_look"]) + " at the looks"
    a = m.get("alpha_per_test")
    return f"{a:.3g} each" if isinstance(a, (int, float)) else "unknown"


def upper_line(eps_ub: float, beta: float, eps: float, margin: float) -> str:
    """What a pass promises, in words (:mod:`dpaudit.verdicts.verdict`).

    Args:
        eps_ub: the measured events' upper bound.
        beta: its error.
        eps: the claimed ε.
        margin: a pass needs ε_ub ≤ (1 + margin)·ε.

    Returns:
        The line: the measured events' loss is below ``eps_ub`` with confidence 1 − β.
    """
    conf = f"{100 * (1 - beta):.6g}%"
    target = (1 + margin) * eps
    if math.isinf(eps_ub):
        return (f"  upper bound on the measured events' loss: eps_ub = inf at confidence {conf} "
                f"(a pass needs <= (1 + margin)·eps = {target:.4g})")
    return (f"  upper bound on the measured events' loss: eps_ub = {eps_ub:.4f} at confidence "
            f"{conf} (beta = {beta:g}; a pass needs <= (1 + margin)·eps = {target:.4g}); not a "
            "bound on eps: events not measured may lose more")


def detectable_line(loss: float, beta: float, median: float, measured: bool) -> str:
    """The planning figure's line: the detectable loss at power 1 − β (and at 50 %).

    Args:
        loss: the detectable loss at power 1 − β.
        beta: 1 − the power.
        median: the detectable loss at 50 %.
        measured: whether an event was measured.

    Returns:
        The line.
    """
    power = f"{100 * (1 - beta):.6g}%"
    head = f"  planning figure (not the pass rule): detectable loss at {power} power"
    if not measured:
        return f"{head}: inf (no event was measured)"
    if math.isinf(loss):
        return (f"{head}: inf (no loss on the measured event reaches that power with these "
                f"runs; {median:.4g} at 50%)")
    return (f"{head} (beta = {beta:g}): {loss:.4f} on the measured event ({median:.4f} at "
            "50%), from the counts measured")


def coverage_text(c: dict) -> str:
    """The ``coverage`` of a result in one sentence (text output and reports).

    Args:
        c: the result's ``coverage``.

    Returns:
        The sentence.
    """
    if not c or not c.get("measured"):
        return f"not measured ({(c or {}).get('reason', 'this result has no coverage record')})"
    if "releases_read" not in c:     # a callable's coupled replay
        return (f"{100 * c['fraction_read']:.4g}% of {c['runs']} coupled runs (run i on d and "
                f"on d' from one generator state) gave another output within the audited "
                f"{c['horizon']} samples ({c['runs_read_any_time']} at any length)")
    phases = ", ".join(f"phase {r['phase']}: {r['releases']} in {r['runs']} runs"
                       for r in c["releases_read"]) or "none"
    st = c["stopping_time"]
    return (f"{100 * c['fraction_read']:.4g}% of {c['runs']} white-box runs read the "
            f"changed entry within the audited {c['horizon']} samples (releases that read it: "
            f"{phases}); "
            f"stopping time on d {st['d']['min']}-{st['d']['max']}, on d' "
            f"{st['d_prime']['min']}-{st['d_prime']['max']}")


def instance_lines(block: dict | None, params: dict | None = None) -> list[str]:
    """The instance an audit searched its way to, in words.

    The dimensions' scopes are given too (a proof-scope value away from the paper's says what
    the paper fixes and that its proof does not use it), and what the screen looked at.

    Args:
        block: the result's ``instance_search``.
        params: the parameters as run (the values of the pinned ones), or None.

    Returns:
        The lines; [] for a fixed instance.
    """
    if not block:
        return []
    rows = {r["dimension"]: r for r in block["space"]}
    given = " (the given instance)" if block.get("audited_origin") == "given" else ""
    lines = [f"  instance (searched over the claim's space): {block['audited']}{given}"]
    audited = block.get("instance", {})
    for name, value in audited.items():
        r = rows[name]
        if r["scope"] == "proof" and value != r["default"]:
            lines.append(f"    {name}: proof scope, {r['source']}")
    scopes = {}
    for name in audited:
        scopes.setdefault(rows[name]["scope"], []).append(name)
    if scopes:
        lines.append("    scopes: " + "; ".join(f"{', '.join(v)}: {k}"
                                                for k, v in scopes.items()))
    if not block["ranked"]:
        lines.append("    every instance screened is vacuous or refused: nothing in the searched "
                     "space showed a differing transcript or a release above eps")
    vacuous = sum(d["reason"].startswith("vacuous") for d in block["dropped"])
    refused = len(block["dropped"]) - vacuous
    shown = [f"{k}={_value_text(params[k])}" if params and k in params else k
             for k in block["pinned"]]
    pinned = f"; pinned: {', '.join(shown)}" if shown else ""
    lines.append(f"    {block['screened']} instances screened (free: {', '.join(block['free'])}"
                 f"{pinned}): {len(block['ranked'])} kept, {vacuous} vacuous (p_div = 0, no "
                 f"release above eps), {refused} refused; {len(block['pool'])} searched for "
                 f"neighbours (the given one, the best ranked and the longest)")
    split = block.get("budget_split")
    if split:
        lines.append(f"    samples spent (at most): instance screen {split['instance_screen']:.3g} "
                     f"({100 * split['instance_screen_share']:.1f}%), pilots "
                     f"{split['pilots']:.3g}, measurement {split['measurement']:.3g}"
                     + (f"; {split['capped']}" if split.get("capped") else ""))
    return lines


def _value_text(v: object) -> str:
    return ",".join(f"{x:g}" for x in v) if isinstance(v, (list, tuple)) else (
        f"{v:g}" if isinstance(v, float) else str(v))


def search_lines(s: dict) -> list[str]:
    """The neighbour search in one line: candidates, white-box screen, pilot rounds.

    Args:
        s: the result's ``search``.

    Returns:
        The lines ([] without a search).
    """
    if not s:
        return []
    b = s["budget"]
    rounds = " -> ".join(str(r["candidates"]) for r in b["rounds"])
    screen = s.get("screen")
    kept = (f", {screen['kept']} kept by the white-box screen" if screen else "")
    where = s.get("positions")
    if where:    # a callable's long tables: the positions changed, not every one
        per = ", ".join(f"{h['positions']} of {h['of']} positions at horizon {h['horizon']}"
                        for h in where["per_horizon"])
        kept += (f" ({per}: the first rows, the rows before stopping, a grid; "
                 f"{where['first_round_runs_per_side']} runs per side each in round 1)")
    return [f"  search ({s['strategy']}): {s['candidates']} candidate pairs{kept}; pilot rounds "
            f"{rounds} pairs, {b['pilot_runs_per_side_used']} pilot runs per side in all"]


def whitebox_lines(w: dict) -> list[str]:
    """The white-box loss of the releases and the gray-box replay, in two lines.

    Args:
        w: the result's ``whitebox``.

    Returns:
        The lines ([] without white-box results).
    """
    if not w:
        return []
    rp = w["replay"]
    step = rp["first_divergent_step"]
    replay = ("no run diverged" if not rp["diverged_runs"] else
              f"{rp['diverged_runs']} runs diverged (first at step {step}): raw data reached a "
              "decision without noise")
    what = releases_text(w)
    return [f"  white-box: largest privacy loss of the releases over {2 * w['runs']} runs = "
            f"{float(w['max_loss']):.4f} ({what})",
            *([f"  accountant: {accountant_text(w['accountant'])}"] if w.get("accountant")
              else []),
            *([f"  release log: {release_log_text(w['release_log'])}"] if w.get("release_log")
              else []),
            *([f"  local reports: {w['reports']['text']}"] if w.get("reports") else []),
            f"  gray-box replay (noise frozen, d -> d' and d' -> d): {replay}"]


def accountant_text(a: dict) -> str:
    """dp-accounting's bounds on the worst run's releases, in words (text output and reports).

    Args:
        a: the result's ``whitebox.accountant``.

    Returns:
        The text: the releases' δ(ε) bounds, the composed profile and what they prove.
    """
    eps, delta = a["eps"], a["delta"]
    worst = max(a["releases"], key=lambda r: r["delta_at_eps"]["lower"])
    lo, hi = worst["delta_at_eps"]["lower"], worst["delta_at_eps"]["upper"]
    what = (f"{worst['mechanism']} release (noise {worst['noise']:.4g}, sensitivity "
            f"{worst['sensitivity']:.4g}) has delta({eps:g}) in [{lo:.4g}, {hi:.4g}]")
    head = (f"run {a['run']}'s {len(a['releases'])} release(s) that read the changed entry "
            f"(dp-accounting PLDs): its most exposed {what}")
    up = {k: float(a["composed"][k]) for k in ("delta_at_eps", "eps_at_delta")}   # "inf" too
    composed = f"; composed, delta({eps:g}) <= {up['delta_at_eps']:.4g}" + (
        f" and eps({delta:g}) <= {up['eps_at_delta']:.4g}" if math.isfinite(up["eps_at_delta"])
        else "")
    if not a["refuted"]:
        return head + f", not above delta = {delta:g} (up to float rounding)" + composed
    return (head + f" > delta = {delta:g}: white-box proof that this release is not "
            f"({eps:g}, {delta:g})-DP, so a privacy proof resting on every release being "
            "(eps, delta)-DP fails there; a fact about the releases, not the verdict, which is "
            "statistical and on the released transcript (a post-processing may lose less)"
            + composed)


ROUNDING = 1e-12    # a δ below it is float rounding of a sum of probabilities (exact_text)


def exact_text(x: dict, eps_lb: float) -> str:
    """The transcript's exact privacy on the audited pair, in words (text and reports).

    Args:
        x: the result's ``exact`` (:func:`dpaudit.auditing.exact.exact_privacy`).
        eps_lb: the audit's lower bound, compared with it.

    Returns:
        The text: ε_exact (or ε(δ)) or its bounds, δ at the claimed ε, ε_lb / ε_exact (the
        upper end); or why the walk was refused on the audited pair.
    """
    if "refused" in x:
        return f"not computed on the audited pair: {x['refused']}"
    at = float(x["eps_exact"])
    low, high = x.get("eps_exact_bounds", (at, at))
    what = (f"eps_exact = {at:.4f}" if low == high else
            f"eps_exact in [{low:.4f}, {high:.4f}]")
    if x["delta"]:
        what += f" at delta = {x['delta']:g}"
    ratio = (f"eps_lb / eps_exact = {eps_lb / at:.3f}" if 0 < at < math.inf else
             "eps_lb / eps_exact undefined")
    if low != high:
        ratio += " (against the upper end)"
    w = x.get("witness")
    if w and low > 0:
        ratio += (f"; the largest certain loss is on a transcript of probability "
                  f"{w['p_d'][1]:.3g} on d, {w['p_d_prime'][1]:.3g} on d'")
    d = float(x["delta_at_eps"])
    shown = "0 (up to float rounding)" if d < ROUNDING else f"{d:.4g}"
    return (f"{what} on the audited pair, delta({x['eps']:g}) = {shown}; "
            f"{ratio} (white-box: {x['method']}, {x['transcripts']} transcripts within "
            f"{x['limit']} samples; no statistics)")


def stratified_text(x: dict, exact: dict | None) -> str:
    """The stratified pure-ε bound on the audited pair, in words (text and reports).

    Args:
        x: the result's ``stratified`` (:func:`dpaudit.auditing.strata.stratified_bound`).
        exact: the result's ``exact`` when computed (its ε_exact is compared), else None.

    Returns:
        The text: the bound, its level, the counts and stratum masses, the method (and the
        ratio to ε_exact); or why there is none.
    """
    if "refused" in x:
        return f"not computed: {x['refused']}"
    c, st = x["counts"], x["stratum"]
    ratio = ""
    if exact and "refused" not in exact and 0 < float(exact["eps_exact"]) < math.inf:
        ratio = f" = {x['eps_lower'] / float(exact['eps_exact']):.3f} of eps_exact"
    return (f"eps_lb = {x['eps_lower']:.4f}{ratio}, confidence {1 - x['alpha']:.0%} "
            f"(statistical evidence, on the audited pair, not the verdict; {x['runs']} runs per "
            f"table, {x['pilot_runs']} of them choosing the event and stratum; numerator "
            f"{x['direction']}: stratum mass ln P = {st['log_mass']:.4f}, ln P' = "
            f"{st['log_mass_prime']:.4f}, event in it {c['in_stratum'][0]}/{c['in_stratum'][1]} "
            f"and {c['in_stratum_prime'][0]}/{c['in_stratum_prime'][1]}, outside it "
            f"{c['outside_prime'][0]}/{c['outside_prime'][1]} on the denominator's own runs: "
            f"P(E) >= {x['p_lower']:.4g}, P'(E) <= {x['p_prime_upper']:.4g}; {x['method']})")


def small_delta_text(x: dict) -> str:
    """The importance-sampled (ε, δ) bound on the audited pair, in words (text and reports).

    Args:
        x: the result's ``small_delta`` (:func:`dpaudit.auditing.importance.small_delta`).

    Returns:
        The text: the bound, its level, the event's weighted masses and the method; or why
        there is none.
    """
    if "refused" in x:
        return f"not computed: {x['refused']}"
    return (f"eps_lb = {x['eps_lower']:.4f} at delta = {x['delta']:g}, confidence "
            f"{1 - x['alpha']:.0%} (statistical evidence, on the audited pair, not the verdict; "
            f"{x['runs']} weighted runs per direction, {x['pilot_runs']} of them choosing the "
            f"event, numerator {x['direction']}: P(E) >= {x['p_lower']:.4g}, P'(E) <= "
            f"{x['p_prime_upper']:.4g}; {x['method']})")


def release_log_text(r: dict) -> str:
    """The release log's δ(ε) lower bound against the claim, in words (text and reports).

    Args:
        r: the result's ``whitebox.release_log``.

    Returns:
        The text: the bound, whether it refutes the release log's (ε, δ)-DP, what that means.
    """
    eps, delta, lo = r["eps"], r["delta"], r["delta_at_eps"]["lower"]
    head = (f"delta({eps:g}) >= {lo:.4g} at confidence {1 - r['alpha']:.0%} (the exact delta of "
            f"each run's first release that read the changed entry, {r['runs_accounted']} of "
            f"{r['runs']} runs, averaged over their histories; estimate "
            f"{r['delta_at_eps']['estimate']:.4g})")
    if r["reason"]:
        return f"no bound: {r['reason']}"
    if not r["refuted"]:
        return head + f", not above delta = {delta:g}"
    return (head + f" > delta = {delta:g}: the release log is NOT ({eps:g}, {delta:g})-DP "
            "(white-box accounting): a proof that the transcript is private because its "
            "releases are (composition, then post-processing) fails here; the verdict above "
            "is on the released transcript")


def releases_text(w: dict) -> str:
    """The white-box releases' loss against ε, in words (text output and reports).

    Above ε is a fact about the releases, not a verdict on the released transcript.

    Args:
        w: the result's ``whitebox``.

    Returns:
        The text.
    """
    if w.get("releases_exceed_eps") is None:
        return f"(eps, delta) claim: {w['runs_above_eps']} runs above eps, which it allows"
    if not w["releases_exceed_eps"]:
        return "within eps"
    return (f"above eps in {w['runs_above_eps']} runs: the internal releases alone are not "
            "eps-DP; the released transcript may still be (e.g. report-noisy-max), the "
            "black-box verdict decides")


def neighbours_lines(nb: dict) -> list[str]:
    """The neighbouring pair in words.

    Args:
        nb: the result's ``neighbours``.

    Returns:
        The lines.
    """
    if "changed_row" in nb:
        where = (f"{nb['model']} tables {nb['rows']}x{nb['arms']}, base {nb['base']['name']}, "
                 f"row {nb['changed_row']} = {_row(nb['row_d'])} in d vs "
                 f"{_row(nb['row_d_prime'])} in d'")
    elif "changed_entry" in nb:
        a, n = nb["changed_entry"]
        where = (f"stream tables {nb['arms']}x{nb['rows']}, base {nb['base']['name']}, pull {n} "
                 f"of arm {a} = {nb['value_d']:g} in d vs {nb['value_d_prime']:g} in d'")
    else:                              # a local reward or a generic mechanism's inputs
        return [f"  neighbours: d = {_row(nb['d'])} vs d' = {_row(nb['d_prime'])}"]
    return [f"  neighbours: {where}", f"    ({nb['why']}; pattern {nb.get('pattern', '0→1')})"]


def _row(values: ArrayLike) -> str:
    values = list(np.ravel(values))
    if len(values) > 12:
        return f"array of {len(values)} values"
    if len(values) == 1:
        return f"{values[0]:g}"
    if len(set(values)) == 1:
        return f"all {values[0]:g}"
    return "(" + ", ".join(f"{v:g}" for v in values) + ")"




def claim_space_lines(rows: list[dict], claim: str, name: str) -> list[str]:
    """The lines ``dpaudit list --claims`` prints for one algorithm.

    Args:
        rows: the space's rows (:meth:`dpaudit.algorithms.space.ClaimSpace.rows`): name, scope,
            scale, searched window, accepted range and source per dimension.
        claim: the privacy claim in words.
        name: the algorithm.

    Returns:
        The claim's line and one line per dimension.
    """
    head = f"{name}: {claim or 'claims no privacy (positive control); its audit searches'}"
    if not rows:
        return [head, "  no dimension: the claim concerns one reward, there is nothing to "
                      "search"]
    cols = [("dimension", "dimension"), ("scope", "scope"), ("scale", "scale"),
            ("window", "searched"), ("source", "source")]
    width = {k: max(len(t), *(len(str(r[k])) for r in rows)) for k, t in cols[:-1]}
    out = [head, "  " + "  ".join(f"{t:<{width[k]}}" for k, t in cols[:-1]) + "  source"]
    for r in rows:
        out.append("  " + "  ".join(f"{str(r[k]):<{width[k]}}" for k, _ in cols[:-1])
                   + f"  {r['source']}; accepted: {r['range']}")
    return out
