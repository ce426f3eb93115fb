"""The AtariARI state variables (Anand et al. 2019): RAM addresses of Pong, Breakout and Boxing,
read from the emulator's RAM for ``task=probing`` (the annotations of mila-iqia/atari-representation-learning,
``atariari/benchmark/ram_annotations.py``; Breakout's 30-byte block bitmap is left out).

Positions, counts and clocks are continuous variables (R²); Pong's scores (0..21) are discrete
(accuracy). A raw RAM byte is the game's own coordinate, not a pixel position.
"""

from __future__ import annotations

from wfeval.tasks.probing import StateVariable

ADDRESSES: dict[str, dict[str, int]] = {
    "pong": {"player_y": 51, "player_x": 46, "enemy_y": 50, "enemy_x": 45, "ball_x": 49, "ball_y": 54,
             "enemy_score": 13, "player_score": 14},
    "breakout": {"ball_x": 99, "ball_y": 101, "player_x": 72, "blocks_hit_count": 77, "score": 84},
    "boxing": {"player_x": 32, "player_y": 34, "enemy_x": 33, "enemy_y": 35, "enemy_score": 19, "clock": 17,
               "player_score": 18},
}
DISCRETE = {("pong", "enemy_score"), ("pong", "player_score")}


def variables(game: str) -> tuple[StateVariable, ...]:
    """The annotated variables of ``game`` (empty: not annotated here)."""
    return tuple(StateVariable(name, "discrete" if (game, name) in DISCRETE else "continuous", f"RAM[{address}]")
                 for name, address in ADDRESSES.get(game, {}).items())


def read(game: str, ram: "list[int] | bytes") -> list[float]:
    return [float(ram[address]) for address in ADDRESSES[game].values()]
