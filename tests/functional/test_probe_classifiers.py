"""AtariARI's class probes and scores (wfeval/functional/probe_classifiers.py) against references:
scikit-learn's documented F1 example, the definition of F1 written out, the optimality conditions and
the closed form of multinomial logistic regression, and scipy's entropy."""

from __future__ import annotations

import numpy as np
import pytest

from wfeval.functional import probe_classifiers as P


def test_weighted_f1_is_scikit_learns_documented_example():
    # sklearn.metrics.f1_score's docstring: y_true [0, 1, 2, 0, 1, 2], y_pred [0, 2, 1, 0, 0, 1],
    # average="weighted" -> 0.26666...
    assert P.weighted_f1([0, 1, 2, 0, 1, 2], [0, 2, 1, 0, 0, 1]) == pytest.approx(0.26666666666666666, abs=1e-15)
    assert P.weighted_f1([3, 3, 7], [3, 3, 7]) == 1.0
    assert P.weighted_f1([3, 3, 7], [7, 7, 3]) == 0.0


def test_weighted_f1_is_the_definition_written_out_and_pools_over_episodes():
    rng = np.random.default_rng(0)
    truth, predicted = rng.integers(0, 6, 300), rng.integers(0, 8, 300)  # classes predicted that never occur
    expected = 0.0
    for label in np.unique(truth):
        tp = np.sum((truth == label) & (predicted == label))
        precision = tp / max(np.sum(predicted == label), 1)
        recall = tp / np.sum(truth == label)
        f1 = 0.0 if tp == 0 else 2 * precision * recall / (precision + recall)
        expected += f1 * np.mean(truth == label)
    assert P.weighted_f1(truth, predicted) == pytest.approx(expected, abs=1e-12)
    parts = [P.f1_counts(truth[a:b], predicted[a:b]) for a, b in ((0, 40), (40, 250), (250, 300))]
    assert P.pooled_f1(parts) == pytest.approx(expected, abs=1e-12)  # counts add up: one test set
    assert P.pooled_f1([{str(k): v for k, v in p.items()} for p in parts]) == pytest.approx(expected, abs=1e-12)


def _objective(x, y_index, classes, weights, bias, penalty):
    """The penalised mean cross-entropy written independently of the module (log-sum-exp by numpy)."""
    logits = x @ weights + bias
    log_z = np.log(np.sum(np.exp(logits - logits.max(1, keepdims=True)), 1)) + logits.max(1)
    return np.mean(log_z - logits[np.arange(len(x)), y_index]) + 0.5 * penalty * np.sum(weights ** 2)


def test_the_logistic_probe_is_the_optimum_of_its_objective():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(120, 5)) * [1, 10, 0.1, 3, 1] + [0, 5, 0, 0, -2]
    y = np.argmax(z[:, :3] * [1, 0.1, 10] @ rng.normal(size=(3, 4)) + rng.normal(size=(120, 4)), axis=1) * 10.0
    probe = P.fit_logistic(z, y, penalty=0.01)
    assert list(probe.classes) == sorted(set(y))
    x = (z - probe.mean) / probe.scale
    index = np.searchsorted(probe.classes, y)
    theta = np.concatenate([probe.weights.ravel(), probe.bias])
    d, c = probe.weights.shape

    def loss(t):
        return _objective(x, index, probe.classes, t[:d * c].reshape(d, c), t[d * c:], 0.01)

    step = 1e-6  # central differences of the independent objective: the gradient vanishes at the probe
    grad = np.array([(loss(theta + step * e) - loss(theta - step * e)) / (2 * step) for e in np.eye(len(theta))])
    assert np.abs(grad).max() < 1e-6
    for _ in range(5):  # strictly convex in W: any other weights cost more
        other = theta + 0.01 * rng.normal(size=theta.shape)
        assert loss(other) > loss(theta)
    np.testing.assert_allclose(probe.probabilities(z).sum(1), 1.0, atol=1e-12)


def test_latents_without_information_give_the_training_class_shares():
    z = np.zeros((10, 3))  # every dimension constant: only the bias can be fit; the optimum is log shares
    y = np.array([1, 1, 1, 2, 2, 3, 3, 3, 3, 3.0])
    np.testing.assert_allclose(P.fit_logistic(z, y).probabilities(z[:1])[0], [0.3, 0.2, 0.5], atol=1e-6)
    assert list(P.fit_logistic(z, np.full(10, 7.0)).predict(np.ones((2, 3)))) == [7.0, 7.0]  # one class seen


def test_entropy_is_scipys_in_nats_and_frames_are_told_apart_by_their_bytes():
    from scipy.stats import entropy

    values = [0, 0, 0, 1, 2, 2, 255, 255, 255, 255]
    assert P.entropy_nats(values) == pytest.approx(entropy([3, 1, 2, 4]), abs=1e-15)
    assert P.entropy_nats([5] * 9) == 0.0
    frames = np.zeros((3, 4, 4, 3), np.uint8)
    frames[2, 0, 0, 0] = 1
    digests = P.frame_digests(frames)
    assert digests[0] == digests[1] != digests[2]


def test_the_penalty_is_chosen_by_the_validation_frames():
    rng = np.random.default_rng(2)
    z = rng.normal(size=(200, 4))
    y = (z[:, 0] > 0).astype(float)
    penalty, probe = P.choose_penalty(z[:150], y[:150], z[150:], y[150:], penalties=(1e-3, 1e3))
    # a huge penalty leaves the weights ~0: the majority class everywhere; the small one reads z[:, 0]
    assert penalty == 1e-3 and P.weighted_f1(y[150:], probe.predict(z[150:])) > 0.9
