"""The probe measures against closed forms: a known linear map is read back exactly (R² = 1), the
ridge solution is the normal equations', a constant probe scores R² = 0, and chance accuracy is the
training majority's share."""

from __future__ import annotations

import numpy as np
import pytest

from wfeval.functional.probing import (ALPHAS, DIRECT_WIDTH, accuracy, choose_alpha, choose_alphas, fit_ridge,
                                       majority_share, r2_term)


def test_a_known_linear_map_is_read_back_exactly_on_held_out_points():
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal(8), 3.0
    z_train, z_test = rng.standard_normal((200, 8)), rng.standard_normal((50, 8))
    probe = fit_ridge(z_train, z_train @ w + b, alpha=0.0)
    truth = z_test @ w + b
    np.testing.assert_allclose(probe.predict(z_test), truth, atol=1e-9)
    assert r2_term(probe.predict(z_test), truth, float(np.var(z_train @ w + b))) == pytest.approx(1.0, abs=1e-12)


def test_the_ridge_probe_is_the_closed_form_of_the_normal_equations():
    rng = np.random.default_rng(1)
    z, y, alpha = rng.standard_normal((40, 5)), rng.standard_normal(40), 2.5
    x = (z - z.mean(0)) / z.std(0)
    x1 = np.concatenate([x, np.ones((40, 1))], axis=1)
    penalty = alpha * np.diag([1, 1, 1, 1, 1, 0.0])  # the bias is not shrunk
    expected = np.linalg.solve(x1.T @ x1 + penalty, x1.T @ y)
    np.testing.assert_allclose(fit_ridge(z, y, alpha=alpha).weights[:, 0], expected, rtol=1e-10)


def test_predicting_the_training_mean_scores_zero_and_a_worse_guess_negative():
    truth = np.array([1.0, 2.0, 3.0, 4.0])
    variance = float(np.var(truth))
    assert r2_term(np.full(4, truth.mean()), truth, variance) == pytest.approx(0.0)
    assert r2_term(truth + 2 * np.sqrt(variance), truth, variance) == pytest.approx(-3.0)
    assert np.isnan(r2_term(truth, truth, 0.0))  # no training variance: no R², never a silent 1


def test_a_ridge_classifier_reads_three_classes_from_their_indicators():
    labels = np.tile([-1.0, 0.0, 1.0], 30)
    z = (labels[:, None] == np.array([-1.0, 0.0, 1.0])[None]).astype(float)
    probe = fit_ridge(z, labels, alpha=0.1, discrete=True)
    assert accuracy(probe.predict(z), labels) == 1.0


def test_chance_accuracy_is_the_training_majority_share():
    assert majority_share([0, 0, 0, 1], np.array([0, 1, 1, 1])) == 0.25


def test_cross_validation_prefers_a_strong_penalty_for_pure_noise_and_a_weak_one_for_a_clean_map():
    rng = np.random.default_rng(2)
    z, groups = rng.standard_normal((160, 40)), np.repeat(np.arange(8), 20)
    assert choose_alpha(z, rng.standard_normal(160), groups) >= 100.0
    assert choose_alpha(z, z @ rng.standard_normal(40), groups) <= 0.1


def test_probes_refuse_non_finite_latents():
    with pytest.raises(ValueError, match="NaN or infinite"):
        fit_ridge(np.array([[0.0], [np.nan]]), np.array([0.0, 1.0]))


def test_pixels_pca_finds_the_same_axes_as_the_svd():
    from wfeval.models.latent_baselines import PixelsPCA

    frames = np.random.default_rng(3).integers(0, 256, size=(30, 6, 5, 3), dtype=np.uint8)
    pca = PixelsPCA(dim=4)
    pca.fit(frames)
    x = frames.reshape(30, -1) / 255.0
    _, _, vt = np.linalg.svd(x - x.mean(0), full_matrices=False)
    np.testing.assert_allclose(np.abs(pca.encode(frames)), np.abs((x - x.mean(0)) @ vt[:4].T), atol=1e-8)


def _normal_equations(z, targets, alpha):
    x = (z - z.mean(0)) / z.std(0)
    x1 = np.concatenate([x, np.ones((len(x), 1))], axis=1)
    penalty = alpha * np.eye(x1.shape[1])
    penalty[-1, -1] = 0.0  # the bias is not shrunk
    return np.linalg.solve(x1.T @ x1 + penalty, x1.T @ targets)


@pytest.mark.parametrize("rows", [120, 900])  # fewer frames than dimensions (the dual), and more
def test_wide_latents_get_the_normal_equations_solution_from_one_decomposition(rows):
    rng = np.random.default_rng(3)
    width = DIRECT_WIDTH + 88
    z = rng.standard_normal((rows, width)) * rng.uniform(0.5, 3.0, width)
    y = z[:, :5] @ rng.standard_normal(5) + rng.standard_normal(rows)
    for alpha in (0.1, 10.0, 1e3):
        probe = fit_ridge(z, y, alpha=alpha)
        expected = _normal_equations(z, y[:, None], alpha)
        np.testing.assert_allclose(probe.weights, expected, rtol=1e-8, atol=1e-10 * np.abs(expected).max())
    labels = (y > 0).astype(float) + (y > 1)
    classifier = fit_ridge(z, labels, alpha=1.0, discrete=True)
    onehot = (labels[:, None] == np.unique(labels)[None]).astype(float)
    np.testing.assert_allclose(classifier.weights, _normal_equations(z, onehot, 1.0), rtol=1e-8, atol=1e-10)


def _refit_every_candidate(z, y, groups, discrete):
    """The penalty search as it was: one normal-equations fit per penalty and fold."""
    ids = np.unique(groups)
    fold = np.array([{g: i % 4 for i, g in enumerate(ids)}[g] for g in groups])
    losses = []
    for alpha in ALPHAS:
        per_fold = []
        for f in np.unique(fold):
            train, test = fold != f, fold == f
            classes = np.unique(y[train])
            targets = (y[train, None] == classes[None]).astype(float) if discrete else y[train, None]
            w = _normal_equations(z[train], targets, alpha)
            x = (z[test] - z[train].mean(0)) / z[train].std(0)
            scores = np.concatenate([x, np.ones((len(x), 1))], axis=1) @ w
            per_fold.append(-np.mean(classes[np.argmax(scores, 1)] == y[test]) if discrete
                            else np.mean((scores[:, 0] - y[test]) ** 2))
        losses.append(np.mean(per_fold))
    return float(ALPHAS[int(np.argmin(losses))])


def test_the_penalty_search_chooses_what_refitting_every_candidate_chooses():
    rng = np.random.default_rng(4)
    groups = np.repeat(np.arange(12), 15)
    for width in (6, 40, 300):
        z = rng.standard_normal((180, width))
        states = np.stack([z[:, 0] + 0.5 * rng.standard_normal(180), rng.standard_normal(180),
                           (z[:, 1] > 0).astype(float) + (z[:, 2] > 0.5)], axis=1)
        discrete = [False, False, True]
        chosen = choose_alphas(z, states, groups, discrete)
        assert chosen == [_refit_every_candidate(z, states[:, j], groups, d) for j, d in enumerate(discrete)]


def test_a_wide_random_projection_projects_each_distinct_frame_once_to_the_every_frame_latents():
    """Above ``DISTINCT_WIDTH`` a repeated frame is projected once: the latents are the every-frame product's
    (to round-off: a row's float sums may depend on its place in the batch), repeats identical; narrower
    projections are that product exactly."""
    from wfeval.functional.rank import distinct_rows
    from wfeval.models.latent_baselines import DISTINCT_WIDTH, RandomProjection

    rng = np.random.default_rng(6)
    distinct = rng.integers(0, 256, size=(5, 4, 4, 3), dtype=np.uint8)
    frames = distinct[[0, 1, 1, 2, 0, 3, 4, 4, 4]]
    first, inverse = distinct_rows(frames.reshape(9, -1))
    assert first.tolist() == [0, 1, 3, 5, 6] and inverse.tolist() == [0, 1, 1, 2, 0, 3, 4, 4, 4]
    x = frames.reshape(9, -1) / 255.0
    for dim in (DISTINCT_WIDTH, DISTINCT_WIDTH + 1):
        model = RandomProjection(dim=dim, seed=2)
        z = model.encode(frames)
        matrix = np.random.default_rng(2).standard_normal((48, dim)) / np.sqrt(48)
        assert np.array_equal(model._matrix, matrix)  # scaled in place: the same matrix
        if dim <= DISTINCT_WIDTH:
            assert np.array_equal(z, x @ matrix)
        else:
            np.testing.assert_allclose(z, x @ matrix, rtol=1e-12, atol=1e-14)
            assert np.array_equal(z[1], z[2]) and np.array_equal(z[6], z[8]) and np.array_equal(z[0], z[4])


def test_a_wide_random_projection_of_moving_sprites_projected_as_differences_gives_the_whole_products_latents():
    """Above ``DISTINCT_WIDTH`` frames that differ from an anchor frame in few places (a sprite moving over an
    episode's background) are projected as those differences, block by block where they are not 0: the whole
    product's latents to round-off (1e-12 of the largest), on a frame size that is not a multiple of ``BLOCK``;
    a frame unlike its anchor starts a new one; frames that differ everywhere are left to the whole product."""
    from wfeval.models.latent_baselines import BLOCK, DISTINCT_WIDTH, RandomProjection, anchors, project_differences

    rng = np.random.default_rng(9)
    frames = []
    for _ in range(3):  # three episodes: a background each, a 2×2 sprite moving over it
        background = rng.integers(0, 256, size=(15, 17, 3), dtype=np.uint8)
        for t in range(5):
            frame = background.copy()
            frame[t:t + 2, 2 * t:2 * t + 2] = [250, 200, 0]
            frames.append(frame)
    frames = np.stack(frames)
    rows = frames.reshape(15, -1)
    assert rows.shape[1] % BLOCK != 0
    assert anchors(rows).tolist() == [0] * 5 + [5] * 5 + [10] * 5
    matrix = rng.standard_normal((765, DISTINCT_WIDTH + 3))
    whole = (rows / 255.0) @ matrix
    z = project_differences(rows, matrix)
    np.testing.assert_allclose(z, whole, rtol=0, atol=1e-12 * np.abs(whole).max())
    noise = rng.integers(0, 256, size=(6, 765), dtype=np.uint8)
    assert anchors(noise).tolist() == list(range(6)) and project_differences(noise, matrix) is None
    model = RandomProjection(dim=DISTINCT_WIDTH + 3, seed=4)
    assert project_differences(np.concatenate([rows, noise[:1]]), matrix) is not None  # a noise frame: an anchor
    latents = model.encode(np.concatenate([frames, noise[:1].reshape(1, 15, 17, 3), frames[:2]]))
    x = np.concatenate([rows, noise[:1], rows[:2]]) / 255.0
    np.testing.assert_allclose(latents, x @ model._matrix, rtol=0, atol=1e-12 * np.abs(latents).max())


def test_the_penalty_search_skips_a_fold_whose_training_episodes_hold_one_class():
    """A discrete variable with one class in a fold's training episodes has no loss there: its penalty is
    chosen from the other folds (and the first candidate when no fold has two classes)."""
    rng = np.random.default_rng(8)
    groups = np.repeat(np.arange(8), 10)
    z = rng.standard_normal((80, 5))
    one_class = np.zeros(80)
    rare = np.where(groups == 0, (z[:, 0] > 0).astype(float), 0.0)  # two classes only in episode 0
    chosen = choose_alphas(z, np.stack([z[:, 0], one_class, rare], axis=1), groups, [False, True, True])
    assert chosen[1] == ALPHAS[0]
    assert chosen[0] == _refit_every_candidate(z, z[:, 0], groups, False)
