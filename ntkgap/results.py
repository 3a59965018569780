"""Typed results of the public API (:mod:`ntkgap.api`).

Each result is a frozen dataclass whose fields are the keys the function's
dict had (and ``ntkgap <verb> --json`` prints), so a field reads as an
attribute (``r.n_star``) or, as before, as a key (``r["n_star"]``): every
result is a read-only :class:`collections.abc.Mapping`. A field a given call
does not produce (a circle spectrum has no ``degree``) is absent: it is not
among the keys and reads as :data:`ABSENT` as an attribute. ``as_dict()``
gives the plain dict, exactly the keys the call produced.

Examples:
    >>> from ntkgap.results import SampleComplexity
    >>> r = SampleComplexity.from_dict({"n_star": 12.0, "n_star_theory": 12.0,
    ...     "censored": False, "n_max": 1e12, "theory_valid": True})
    >>> r.n_star, r["censored"], sorted(r.as_dict())[:2]
    (12.0, False, ['censored', 'n_max'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping


class _Absent:
    """The value of a field that a call did not produce."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


#: the value of an absent field, read as an attribute
ABSENT = _Absent()


class Result(Mapping):
    """Base of the typed results: a frozen dataclass read as a Mapping."""

    @classmethod
    def from_dict(cls, d: Mapping) -> Result:
        """The typed result of a function's dict.

        Args:
            d: the dict the function built.

        Returns:
            an instance of ``cls``; a key that is not a field raises
            TypeError (the class and the function must name the same keys).
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise TypeError(f"{cls.__name__}: no field for {sorted(unknown)}")
        return cls(**dict(d))

    def as_dict(self) -> dict:
        """The result as the plain dict the function returned before it was
        typed: the fields the call produced, in declaration order.

        Returns:
            dict (shallow: values are the fields' own objects).
        """
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) is not ABSENT
        }

    def __getitem__(self, key):
        names = {f.name for f in dataclasses.fields(self)}
        value = getattr(self, key, ABSENT) if key in names else ABSENT
        if value is ABSENT:
            raise KeyError(key)
        return value

    def __iter__(self):
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items())
        return f"{type(self).__name__}({inner})"


def _typed(cls):
    """A frozen dataclass over ``Result``, every field defaulting to ABSENT
    (eq=False: equality is the Mapping's, by items)."""
    for name in cls.__annotations__:
        setattr(cls, name, dataclasses.field(default=ABSENT))
    return dataclasses.dataclass(frozen=True, eq=False, repr=False)(cls)


@_typed
class Spectrum(Result):
    """:func:`ntkgap.spectrum`: the exact Fourier (circle) or Walsh
    (hypercube) spectrum of a target.

    Fields:
        target, domain: the specs, as strings.
        variance, mean: the target's exact moments.
        degree, weight (hypercube): the Walsh weight per degree.
        support, dominant_degree (hypercube): the coordinates read and the
            degree of most weight.
        frequency, power, truncated_power, dominant_frequency (circle): the
            Fourier power per frequency, the power beyond ``kmax`` and the
            frequency of most power.
        complexity: the Fourier-complexity measures.
        architecture: the architectural complexity (constituents).
        note: why an exact spectrum is not given, when it is not.
        method: how the spectrum was computed, when not by the exact
            transform (a tree target's composition over its nodes).
        positions, weight_es_squared, weight_es_covariance, moments (RHM
            token strings): the token positions, the Efron-Stein degree
            profiles (squared and covariance shares) and the moments.
    """

    target: str
    domain: str
    variance: float
    mean: float
    degree: list
    weight: list
    support: list
    dominant_degree: int
    frequency: list
    power: list
    truncated_power: float
    dominant_frequency: int
    complexity: dict
    architecture: dict
    note: str
    method: str
    positions: int
    weight_es_squared: list
    weight_es_covariance: list
    moments: dict


@_typed
class SampleComplexity(Result):
    """:func:`ntkgap.sample_complexity`: eigenlearning theory's n*(eps).

    Fields:
        n_star: the fewest samples reaching eps (None when censored).
        n_star_theory: the same number under the command line's name.
        censored: True when eps is not reached by ``n_max``.
        n_max: the search limit.
        theory_valid: whether the theory's assumptions hold here.
        relative_mse_at_n_max (censored only): the theory's relative test
            MSE at ``n_max``, how far from eps the search stopped.
    """

    n_star: float
    n_star_theory: float
    censored: bool
    n_max: float
    theory_valid: bool
    relative_mse_at_n_max: float


@_typed
class LearningCurve(Result):
    """:func:`ntkgap.learning_curve`: relative test MSE against n.

    Fields:
        n: the sample sizes.
        theory: eigenlearning theory's relative test MSE per n.
        theory_valid: per n, whether the theory applies.
        kappa: the theory's effective regularisation per n.
        learnability: the theory's learnability per n.
        modes: the eigenmodes the theory summed (eigenvalue, multiplicity,
            target weight).
        empirical, empirical_std: the empirical mean and std per n (None
            without seeds).
        overlap: per n, the mean fraction of test points also trained on.
        jitter_notes: the fits that needed a jitter.
    """

    n: list
    theory: list
    theory_valid: list
    kappa: list
    learnability: list
    modes: dict
    empirical: list
    empirical_std: list
    overlap: list
    jitter_notes: list


@_typed
class Training(Result):
    """:func:`ntkgap.train`: trained finite networks, one per seed.

    Fields:
        test_mse, test_mse_per_seed, test_mse_std: relative test MSE (mean
            over seeds, per seed, std).
        train_mse, best_val_mse, best_step: at the scored checkpoint.
        steps, steps_per_seed, steps_requested: optimisation steps.
        diverged, diverged_per_seed: non-finite or never improved.
        overlap, overlap_per_seed, train_duplicates: train/test overlap.
        n_train, n_val, n_test_points, n_params, width, arch_reads: sizes.
        seeds, config, workers, seconds: the run's settings and cost.
        loss_curve: the training and validation loss per checkpoint.
        warnings: one sentence for each thing the numbers do not say.
        test_class_error, test_class_error_per_seed, classification: for
            classification targets (RHM), the error rate.
    """

    test_mse: float
    test_mse_per_seed: list
    test_mse_std: float
    train_mse: list
    best_val_mse: list
    best_step: list
    steps: int
    steps_per_seed: list
    steps_requested: int
    diverged: bool
    diverged_per_seed: list
    overlap: float
    overlap_per_seed: list
    train_duplicates: list
    n_train: int
    n_val: int
    n_test_points: int
    n_params: int
    width: int
    arch_reads: list
    seeds: list
    config: dict
    workers: int
    seconds: float
    loss_curve: list
    warnings: list
    test_class_error: float
    test_class_error_per_seed: list
    classification: dict


@_typed
class Prediction(Result):
    """:func:`ntkgap.predict`: both sides' n*(eps) before training.

    Fields:
        target, arch, eps: what was asked.
        C: the target's number of constituents (the law's variable).
        kernel_n_star, kernel_censored, kernel_theory_valid, kernel_reason:
            the own-architecture NTK's theory n*, whether it is censored,
            whether the theory applies, and why not when it does not.
        net_n_star, net_interval: the law's prediction for the trained net
            and its interval.
        winner, winner_decided, ratio, ratio_interval: which side needs
            fewer samples, whether the intervals decide it, and by how much.
        law: the law's form, parameters and the families fitted on.
        measured: stored measurements of this very family, if any.
        extrapolation: how far outside its fitted families the prediction is.
        sealed: the sealed file, when sealing was asked for.
    """

    target: str
    arch: str
    eps: float
    C: float
    kernel_n_star: float
    kernel_censored: bool
    kernel_theory_valid: bool
    kernel_reason: str
    net_n_star: float
    net_interval: list
    winner: str
    winner_decided: bool
    ratio: float
    ratio_interval: list
    law: dict
    measured: dict
    extrapolation: dict
    sealed: str
