"""Benchmark variants inherit their base file (a defaults entry plus the lines that differ) and compose
to exactly the config their full copies did: the same benchmark node, config hash, class and metric
suite (the values below were measured on the copies before they became variants)."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from tests.conftest import compose
from wfeval.config import plugins
from wfeval.pipeline.recorder import config_hash
from wfeval.utils.hashing import sha256_json

CONF = Path(__file__).resolve().parents[2] / "conf" / "benchmark"

# benchmark -> (sha256 of its resolved benchmark node, the config hash of `benchmark=<it>`), from the copies
PINNED = {
    "atari_pong": ("19cee3af7b21789f1fa0395b15215867fd6e929922e2596aeada76e7633fb4a4",
                   "1baa4c1c848ae7a90aac1af37f7fcb5f7c5ce548f32f21eb27650952600306b7"),
    "atari_breakout": ("32f0f071658755112ca8227188d65cda451215db0841b5accc40c81baf247ac9",
                       "9c7c76b5222b95459258b2824cf6f6e93604612078f3a9dfb5de7fc35b459532"),
    "atari_boxing": ("c8927a3a85dddb1a8963112009ba427910285ce482d32455c99f06f5cf33d0ab",
                     "a856f5b1058946b9118852bab9f331a2bad67f82cda46c32d729f9ec6c82839c"),
    "memory_maze": ("7a6770c6f0fe884d052cde7010c5b4eb6fec083241c68bb838f59ea99a4f25d0",
                    "75c7eb6d8b717883bacb85ee158c57fe143ba1ffece0ca68dac83632e8aec6cc"),
    "memory_maze_15x15": ("43ece2c5eb5272627af62b0928c038e38e2a4c536b3c8e9c8ad8384d396c47dd",
                          "2ab51d8bfd5e4148fb87ac2c4393a1f44c4531007f5f1eb61dc54e985cf4821f"),
    "memory_maze_long": ("9042bfefc4945c4f69786b9065643a37dd15a8daa4ca43c112b1333bf0fa3dc4",
                         "d249b06d1d6abce4554f79426fa6aab597aea83bda28a0371e433cb0506b29fb"),
}
VARIANTS = {"atari_breakout": "atari_pong", "atari_boxing": "atari_pong",
            "memory_maze_15x15": "memory_maze", "memory_maze_long": "memory_maze"}


@pytest.mark.parametrize("benchmark", sorted(PINNED))
def test_each_benchmark_composes_to_the_config_its_full_copy_did(benchmark):
    plain = OmegaConf.to_container(compose([f"benchmark={benchmark}"]), resolve=True)
    assert (sha256_json(plain["benchmark"]), config_hash(plain)) == PINNED[benchmark]


@pytest.mark.parametrize("variant,base", sorted(VARIANTS.items()))
def test_a_variant_file_holds_its_base_as_a_defaults_entry_and_only_the_lines_that_differ(variant, base):
    text = (CONF / f"{variant}.yaml").read_text()
    content = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(content) <= 20, content
    assert f"  - {base}\n  - _self_" in text and "_target_" not in text and "metrics:" not in text
    variant_cfg, base_cfg = (compose([f"benchmark={b}"]).benchmark for b in (variant, base))
    assert variant_cfg.name == variant and variant_cfg._target_ == base_cfg._target_
    assert list(variant_cfg.metrics) == list(base_cfg.metrics)


def test_the_raw_file_readers_follow_a_variants_defaults_entry():
    """The class (schemas, the benchmark registry) and the metric suite read from the files without
    composing are the base's, with the variant's own lines laid over (lists replaced)."""
    files = plugins.option_files("benchmark")
    assert plugins.builtin_targets("benchmark")["memory_maze_long"] == "wfeval.benchmarks.memory_maze.MemoryMazeBenchmark"
    assert plugins.benchmark_metrics("atari_boxing") == plugins.benchmark_metrics("atari_pong") == [
        "generated_rate", "artifact_count", "psnr", "ssim", "flicker", "motion_magnitude"]
    long = files["memory_maze_long"]
    assert long["memory_gaps"] == [8, 32, 128, 256] and long["env"] == {"size": 9, "camera_resolution": 64,
                                                                         "good_visibility": False}
    assert long["evidence"]["min_valid"] == {"default": 8} and long["evidence"]["official_splits"] == ["test"]
    assert files["memory_maze_15x15"]["env"]["size"] == 15 and files["memory_maze"]["env"]["size"] == 9
