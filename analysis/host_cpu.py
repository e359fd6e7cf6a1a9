"""What this CPU can do, as LLVM names it: the CPU's name and its feature
string. Lowerings read it to choose instructions (VNNI dot products), the
runtime to build code for it; XTC_VNNI=0 hides VNNI from both."""

from __future__ import annotations

import functools
import os

import llvmlite.binding as llvm_binding

VNNI_VARIABLE = "XTC_VNNI"
"""Set to 0, xtc and LLVM treat this CPU as one without VNNI: 8-bit dot
products are widened (to test and measure the fallback). The compile
cache keys hold the features, so the two builds never mix."""

_VNNI_FEATURES = ("avx512vnni", "avxvnni")


def host_cpu_name() -> str:
    """LLVM's name of this CPU (e.g. "znver3")."""
    return llvm_binding.get_host_cpu_name()


def host_cpu_features() -> str:
    """This CPU's features as LLVM spells them ("+avx2,+fma,-avx512f,..."),
    less VNNI where XTC_VNNI=0."""
    features = _reported_features()
    if os.environ.get(VNNI_VARIABLE) != "0":
        return features
    off = {f"+{name}" for name in _VNNI_FEATURES}
    return ",".join(f"-{f[1:]}" if f in off else f for f in features.split(","))


def has_features(*names: str) -> bool:
    """Whether this CPU has every feature of `names` (LLVM's spelling)."""
    return set(names) <= _enabled(host_cpu_features())


@functools.cache
def _enabled(features: str) -> frozenset[str]:
    """The names a feature string turns on (the lowerings ask per loop)."""
    return frozenset(f[1:] for f in features.split(",") if f.startswith("+"))


@functools.cache
def _reported_features() -> str:
    try:
        return llvm_binding.get_host_cpu_features().flatten()
    except RuntimeError:  # not every platform reports them
        return ""
