"""Small-MLP probes (wfeval/functional/mlp_probes.py) against the ridge probes' closed form: on a target
linear in the latents both read it alike; on targets no linear map holds (a square, an XOR of two signs)
the MLP reads them and ridge does not. Seeded, batched, early-stopped on the validation frames."""

from __future__ import annotations

import numpy as np
import pytest

from wfeval.functional.mlp_probes import fit_mlp_probes
from wfeval.functional.probing import accuracy, fit_ridges, predict_all, r2_term

DISCRETE = [False, False, True]


def _data(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    z = rng.normal(size=(n, 8))
    linear = z @ np.linspace(-1.0, 1.0, 8) + 0.1 * rng.normal(size=n)
    square = z[:, 0] ** 2  # even in z0: no linear read-out beats the mean
    xor = (np.sign(z[:, 1]) * np.sign(z[:, 2]) > 0).astype(np.float64)  # the XOR of two signs: 50 % linearly
    return z, np.stack([linear, square, xor], axis=1)


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    (zt, yt), (zv, yv), (ze, ye) = _data(600, rng), _data(150, rng), _data(400, rng)
    mlp = fit_mlp_probes(zt, yt, zv, yv, DISCRETE, hidden=64, epochs=120, seed=0)
    ridge = fit_ridges(np.concatenate([zt, zv]), np.concatenate([yt, yv]), [1.0] * 3, DISCRETE)
    scores = {}
    for name, predicted in (("mlp", mlp.predict_all(ze)), ("ridge", predict_all(ridge, ze))):
        scores[name] = [r2_term(predicted[j], ye[:, j], float(np.var(yt[:, j]))) for j in range(2)]
        scores[name].append(accuracy(predicted[2], ye[:, 2]))
    return mlp, scores, (zt, yt, zv, yv, ze)


def test_on_a_target_linear_in_the_latents_the_mlp_probe_reads_what_ridge_reads(fitted):
    _, scores, _ = fitted
    assert scores["ridge"][0] > 0.98  # 0.1 noise on a unit-scale signal: the closed form's R²
    assert abs(scores["mlp"][0] - scores["ridge"][0]) < 0.03


def test_on_a_square_and_an_xor_the_mlp_probe_reads_what_ridge_cannot(fitted):
    _, scores, _ = fitted
    assert scores["ridge"][1] < 0.05 and scores["mlp"][1] > 0.8  # z0²: ridge at the mean, the MLP near exact
    assert abs(scores["ridge"][2] - 0.5) < 0.08 and scores["mlp"][2] > 0.8  # XOR: ridge at chance


def test_every_variable_has_its_own_head_in_one_batched_module_and_keeps_its_best_validation_epoch(fitted):
    mlp, _, (_, _, _, _, ze) = fitted
    assert mlp.w1.shape == (3, 8, 64) and mlp.w2.shape == (3, 64, 2)  # 3 variables, 2 outputs: the XOR's classes
    assert mlp.outputs(ze).shape == (3, len(ze), 2)  # one forward for every variable
    assert list(mlp.classes[2]) == [0.0, 1.0] and mlp.classes[0] is None
    assert all(1 <= e <= mlp.epochs_run <= 120 for e in mlp.best_epochs)


def test_the_same_seed_gives_the_same_probes_and_another_seed_other_ones(fitted):
    mlp, _, (zt, yt, zv, yv, ze) = fitted
    again = fit_mlp_probes(zt, yt, zv, yv, DISCRETE, hidden=64, epochs=120, seed=0)
    np.testing.assert_array_equal(again.w1, mlp.w1)
    other = fit_mlp_probes(zt[:200], yt[:200], zv, yv, DISCRETE, hidden=64, epochs=3, seed=1)
    assert not np.allclose(other.w1, mlp.w1)


def test_latents_that_are_not_finite_are_refused_naming_the_problem():
    z = np.ones((10, 3))
    z[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        fit_mlp_probes(z, np.zeros((10, 1)), np.ones((4, 3)), np.zeros((4, 1)), [False])
    with pytest.raises(ValueError, match="validation latents"):
        fit_mlp_probes(np.random.default_rng(0).normal(size=(10, 3)), np.zeros((10, 1)), np.full((4, 3), np.inf),
                       np.zeros((4, 1)), [False])
