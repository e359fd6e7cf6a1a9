"""Measuring candidates on a Ray cluster (`pip install 'xtc[distributed]'`).

    runner = RayRunner(MeasureOptions(threads=2), address="ray://head:10001")
    xtc tune model.onnx --runner ray --ray-address ray://head:10001

Each candidate is a Ray task that asks for as many CPUs as its kernel's
threads, so a node times one candidate per `threads` cores and candidates
never share cores. Ray starts, places and restarts the worker processes:
xtc runs no tracker of its own. A task whose worker dies is a crash; one
that outlives the build and run timeouts is cancelled (a timeout). Without
an address, Ray's own rules apply: `RAY_ADDRESS` when it is set, else a
local instance on this machine.

Every node needs the same xtc, Python and CPU as the machine that compiles
(records are keyed by CPU): a cluster of one kind of node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xtc.tune.measure import (
    ErrorKind,
    MeasureInput,
    MeasureOptions,
    MeasureResult,
    Reference,
    Runner,
    brief,
    candidate_request,
    measure_candidate,
)

_REFERENCES: dict[str, Reference] = {}
"""Each Ray worker's reference outputs, by workload key."""


def _measure_on_worker(request: Mapping[str, Any]) -> MeasureResult:
    try:
        return measure_candidate(request, _REFERENCES, lambda: None)
    except Exception as e:  # noqa: BLE001 - every failure comes back as a result
        return MeasureResult(error=ErrorKind.RUN, message=brief(e))


class RayRunner(Runner):
    """Measures candidates as Ray tasks (see the module doc)."""

    def __init__(
        self,
        options: MeasureOptions | None = None,
        address: str | None = None,
        **init_options: Any,
    ) -> None:
        try:
            import ray
        except ImportError:
            from xtc.tune.tuning import TuneError

            raise TuneError(
                "the ray runner needs Ray: pip install 'xtc[distributed]' (or pip install ray)"
            ) from None
        self.options = options or MeasureOptions()
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            ray.init(
                address=address, include_dashboard=False, logging_level="ERROR", **init_options
            )
        cpus = max(1, self.options.threads or 1)
        self._remote = ray.remote(num_cpus=cpus, max_retries=0)(_measure_on_worker)

    def measure(self, inputs: Sequence[MeasureInput]) -> list[MeasureResult]:
        ray = self._ray
        results: list[MeasureResult | None] = [None] * len(inputs)
        pending: dict[Any, int] = {}
        for index, item in enumerate(inputs):
            try:
                request = candidate_request(item, self.options)
            except Exception as e:  # noqa: BLE001 - a recipe that cannot be made is invalid
                results[index] = MeasureResult(error=ErrorKind.INVALID, message=brief(e))
                continue
            pending[self._remote.remote(request)] = index
        limit = self.options.build_timeout_s + self.options.run_timeout_s
        for reference, index in pending.items():
            results[index] = self._collect(ray, reference, limit)
        return [r if r is not None else MeasureResult(error=ErrorKind.RUN) for r in results]

    @staticmethod
    def _collect(ray: Any, reference: Any, limit: float) -> MeasureResult:
        """The result of one Ray task, waited for `limit` seconds at most
        (from when this candidate's turn comes)."""
        ready, _ = ray.wait([reference], timeout=limit)
        if not ready:
            ray.cancel(reference, force=True)
            return MeasureResult(
                error=ErrorKind.TIMEOUT, message=f"building and running took more than {limit:g} s"
            )
        try:
            return ray.get(reference)
        except ray.exceptions.WorkerCrashedError as e:
            return MeasureResult(error=ErrorKind.CRASH, message=brief(e))
        except ray.exceptions.RayError as e:
            return MeasureResult(error=ErrorKind.RUN, message=brief(e))

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
