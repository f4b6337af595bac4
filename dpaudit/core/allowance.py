"""What an audit may still spend: samples under the samples cap, wall time under the time limit.

The samples cap (``Budget.max_samples``) is counted, so the same seed gives the same result on
every machine. The time limit (``Budget.time_limit``, seconds) of an audit of a registered
algorithm is turned into a counted cap (:meth:`Allowance.counted_time`): the limit times the
rate of simulated samples measured once, on warm kernels, before the audit starts. No clock is
read after that, so compiling never changes a result, the result is the one ``--max-samples``
at that count gives, and a result it cut short names the count. Elsewhere
(:meth:`Allowance.of` with a time limit) the limit is a clock: a stage is not started when the
samples it costs, at the rate measured so far, would end past the deadline. A result either
limit cut short says so; without a cut it is the same as with no limit.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace


@dataclass
class Allowance:
    """Samples and time left to an audit's stages.

    Attributes:
        samples: samples left under the cap (``math.inf``: no cap).
        deadline: ``time.perf_counter()`` value past which no stage starts (``math.inf``: no
            limit).
        done: samples simulated since ``start`` (the rate of the time projection).
        start: when the counted stages began (``time.perf_counter()``).
    """

    samples: float = math.inf
    deadline: float = math.inf
    done: int = 0
    start: float = field(default_factory=time.perf_counter)
    cap: int | None = None           # the budget's max_samples and time_limit, for the text
    limit: float | None = None
    rate: float | None = None        # samples/s the time limit was counted at (counted_time)

    @classmethod
    def of(cls, max_samples: int | None, time_limit: float | None, spent: int = 0,
           t0: float | None = None) -> Allowance:
        """The allowance of a budget's samples cap and time limit.

        Args:
            max_samples: the samples cap (None: none).
            time_limit: the time limit in seconds (None: none).
            spent: samples already spent (e.g. by the instance screen).
            t0: when the limit's clock started (``time.perf_counter()``; None: now).

        Returns:
            The allowance, its rate clock started now.
        """
        now = time.perf_counter()
        t0 = now if t0 is None else t0
        return cls(math.inf if max_samples is None else max_samples - spent,
                   math.inf if time_limit is None else t0 + time_limit, 0, now, max_samples,
                   time_limit)

    def counted_time(self, time_limit: float | None, rate: float | None,
                     spent: int = 0) -> Allowance:
        """This allowance with a time limit turned into a counted samples cap.

        The limit's samples are ``rate`` × ``time_limit``, over every counted stage (``spent``
        already went to the instance screen); they become the cap when below the cap already
        set. The deadline is dropped: no later decision reads a clock, and the result is the
        one ``--max-samples`` at that count gives.

        Args:
            time_limit: the limit in seconds (None: none; the allowance is returned as it is).
            rate: samples per second (runs × samples per run, as stages count them), measured
                on warm kernels before the audit started.
            spent: samples already spent.

        Returns:
            The allowance; its :attr:`rate` is set when the time limit sets the cap.
        """
        if time_limit is None or rate is None:
            return self
        cap = max(spent + 1, int(rate * time_limit))     # at least 1 left: a valid cap
        if cap - spent >= self.samples:
            return replace(self, deadline=math.inf, limit=None)
        return replace(self, samples=cap - spent, deadline=math.inf, cap=cap,
                       limit=time_limit, rate=rate)

    def refusal(self, cost: float) -> str:
        """Why a stage may not start ("" if it may).

        Args:
            cost: the stage's samples.

        Returns:
            The samples cap when ``cost`` exceeds what is left; the time limit when its deadline
            passed or the stage would end past it at the rate measured so far; else "".
        """
        if cost > self.samples and self.rate is not None:
            return (f"the time limit ({self.limit:g} s; --time-limit), counted as a cap of "
                    f"{self.cap} samples at the {self.rate:.3g} samples/s measured before the "
                    "audit (--max-samples reproduces it)")
        if cost > self.samples:
            return f"the samples cap ({self.cap:.3g} samples; --max-samples)"
        if math.isinf(self.deadline):
            return ""
        now = time.perf_counter()
        rate = self.done / (now - self.start) if self.done and now > self.start else math.inf
        if now + cost / rate > self.deadline:
            return f"the time limit ({self.limit:g} s; --time-limit)"
        return ""

    def spend(self, cost: float) -> None:
        """Count a stage as spent.

        Args:
            cost: the stage's samples.
        """
        self.samples -= cost
        self.done += int(cost)
