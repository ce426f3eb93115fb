"""The checkpoint reader unpickles numeric numpy arrays in dicts and nothing else."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from wfeval.features.safe_pickle import UnsafePickleError, load_array_tree


class _Exploit:
    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", [3, 4, 5])
def test_nested_dicts_of_arrays_round_trip(protocol):
    tree = {"params": {"Conv": {"kernel": np.arange(24, dtype=np.float32).reshape(2, 3, 4)}},
            "batch_stats": {"mean": np.zeros(3, np.float64), "count": np.array(7, np.int64)}}
    loaded = load_array_tree(pickle.dumps(tree, protocol=protocol))
    np.testing.assert_array_equal(loaded["params"]["Conv"]["kernel"], tree["params"]["Conv"]["kernel"])
    assert loaded["batch_stats"]["mean"].dtype == np.float64


def test_a_pickle_that_calls_a_function_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    data = pickle.dumps({"params": _Exploit(str(marker))})
    with pytest.raises(UnsafePickleError, match="refusing to unpickle .*system"):
        load_array_tree(data)
    assert not marker.exists()


def test_object_arrays_and_other_leaves_are_refused():
    with pytest.raises(UnsafePickleError, match="object"):
        load_array_tree(pickle.dumps({"a": np.array([{"x": 1}], dtype=object)}))
    with pytest.raises(UnsafePickleError, match="expected a dict or a numpy array, got list"):
        load_array_tree(pickle.dumps({"a": [1, 2]}))
    with pytest.raises(UnsafePickleError, match="_codecs.encode"):  # protocol 2 encodes bytes by a call
        load_array_tree(pickle.dumps({"a": np.zeros(2)}, protocol=2))
    with pytest.raises(UnsafePickleError, match="non-string key"):
        load_array_tree(pickle.dumps({1: np.zeros(1)}))
